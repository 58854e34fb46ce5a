/**
 * {@code kvpager status}, {@code top} and {@code limit}: a client that asks each instance's
 * coordinator over the event bus, and a renderer that turns the answers into text, kept apart so
 * the text is tested without a terminal.
 */
package io.kvpager.cli.status;

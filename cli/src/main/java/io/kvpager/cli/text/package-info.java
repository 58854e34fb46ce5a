/**
 * Text the commands print: aligned tables ({@link io.kvpager.cli.text.TextTable}) and byte sizes
 * ({@link io.kvpager.cli.text.ByteSize}). Below the commands, the demo and the status screens, which
 * all use it, so none of them depends on another for it. Plain values, on the caller's thread.
 */
package io.kvpager.cli.text;

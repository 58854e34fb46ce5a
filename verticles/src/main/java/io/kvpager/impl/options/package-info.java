/**
 * The readers of a cache's options: each option's name, type and check
 * ({@link io.kvpager.impl.options.OptionField}), and the layers of a JSON file, environment
 * variables and system properties read through vertx-config ({@link io.kvpager.impl.options.OptionSources}).
 * No thread of their own: the checks run on the caller's thread, a file's read on the caller's
 * Vert.x instance, before a cache is deployed.
 */
package io.kvpager.impl.options;

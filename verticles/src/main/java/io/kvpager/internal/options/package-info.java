/**
 * The readers of options: the one strict reader of JSON values ({@link io.kvpager.internal.options.OptionReader})
 * and the one rule set ({@link io.kvpager.internal.options.OptionRules}) that every options class, request
 * body and command-line flag checks with; a cache's fields ({@link io.kvpager.internal.options.OptionField}),
 * and the layers of a JSON file, environment
 * variables and system properties read through vertx-config ({@link io.kvpager.internal.options.OptionSources}).
 * No thread of their own: the checks run on the caller's thread, a file's read on the caller's
 * Vert.x instance, before a cache is deployed.
 */
package io.kvpager.internal.options;

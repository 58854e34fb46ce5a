/**
 * The readers of options: the one strict reader of JSON values ({@link io.kvpager.internal.options.OptionReader})
 * and the one rule set ({@link io.kvpager.internal.options.OptionRules}) that every options class, request
 * body and command-line flag checks with; the table each options class reads and writes its JSON
 * with ({@link io.kvpager.internal.options.OptionTable}, one {@link io.kvpager.internal.options.Option} row a
 * field), and the layers of a JSON file, environment
 * variables and system properties read through vertx-config ({@link io.kvpager.internal.options.OptionSources}).
 * No thread of their own: the checks run on the caller's thread, a file's read on the caller's
 * Vert.x instance, before a cache is deployed.
 */
package io.kvpager.internal.options;

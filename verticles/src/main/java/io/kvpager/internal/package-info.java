/**
 * What kvpager's sibling modules (the CLI, the cluster node, the test harness) need from inside
 * kvpager-verticles, with no promise to applications, as {@code io.vertx.core.internal} is to Vert.x's
 * own modules: {@link io.kvpager.internal.CoordinatorView}, the tests' and tools' one door into a
 * local cache's coordinator. The subpackages hold the option rules ({@code internal.options}),
 * cluster membership ({@code internal.membership}) and the sealed books of the cluster's shared
 * records ({@code internal.books}). Nothing under {@code io.kvpager.impl} is used outside
 * kvpager-verticles; these packages are how a sibling gets what it needs instead.
 * {@code CoordinatorView} brings its reads onto the coordinator's event loop.
 */
package io.kvpager.internal;

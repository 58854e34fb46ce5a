/**
 * kvpager's cache API: {@link io.kvpager.cache.KvCache} and its options, statistics and failures.
 * Every method may be called from any thread and is asynchronous: the work runs on the
 * coordinator's event loop, and the returned future completes on the caller's Vert.x context when
 * the caller has one (without one, on the coordinator's event loop). The shared vocabulary
 * ({@link io.kvpager.Geometry}, {@link io.kvpager.FailureCode}, ...) is in {@code io.kvpager}, in
 * kvpager-core.
 *
 * <p>{@code @ModuleGen} lets Vert.x codegen write the RxJava 3 API from {@code KvCache}'s
 * {@code @VertxGen} interface: {@code io.kvpager.rxjava3.cache.KvCache}.
 */
@ModuleGen(name = "kvpager", groupPackage = "io.kvpager")
package io.kvpager.cache;

import io.vertx.codegen.annotations.ModuleGen;

/**
 * kvpager's cache API: {@link io.kvpager.cache.KvCache} and its options, statistics and failures.
 * Every method may be called from any thread and is asynchronous: the work runs on the
 * coordinator's event loop, and the returned future completes on the caller's Vert.x context when
 * the caller has one (without one, on the coordinator's event loop). The shared vocabulary
 * ({@link io.kvpager.Geometry}, {@link io.kvpager.FailureCode}, ...) is in {@code io.kvpager}, in
 * kvpager-core.
 */
package io.kvpager.cache;

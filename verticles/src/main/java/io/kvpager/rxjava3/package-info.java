/**
 * The RxJava 3 API of kvpager: {@link io.kvpager.rxjava3.KvCache} wraps {@link io.kvpager.cache.KvCache}
 * with {@code Single} and {@code Completable}, as vertx-rx-java3 wraps Vert.x's own APIs. Threads as
 * in {@code io.kvpager.cache}: any caller thread; results arrive on the caller's context when it
 * has one.
 */
package io.kvpager.rxjava3;

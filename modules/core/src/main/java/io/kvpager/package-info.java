/**
 * kvpager's public concepts: a pool's {@link io.kvpager.Geometry} and {@link io.kvpager.Layout},
 * and the {@link io.kvpager.FailureCode}s a caller switches on. The cache API itself
 * ({@code KvCache}) lives in kvpager-verticles, in package {@code io.kvpager.cache}: each package
 * is in one jar only.
 */
package io.kvpager;

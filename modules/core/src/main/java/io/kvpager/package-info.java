/**
 * kvpager's public concepts: a pool's {@link io.kvpager.Geometry} and {@link io.kvpager.Layout},
 * and the {@link io.kvpager.FailureCode}s a caller switches on. The cache API itself
 * ({@code KvCache}) lives in kvpager-verticles, in this same package.
 */
package io.kvpager;

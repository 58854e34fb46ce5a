/**
 * Runners that measure a cache on simulated H200s (not tests): see {@link io.kvpager.bench.AllocationBench}.
 */
package io.kvpager.bench;

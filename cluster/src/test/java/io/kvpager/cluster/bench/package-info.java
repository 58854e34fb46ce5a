/**
 * Runners that measure clustered kvpager over loopback (not tests): see
 * {@link io.kvpager.cluster.bench.ClusterBench}.
 */
package io.kvpager.cluster.bench;

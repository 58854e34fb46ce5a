/**
 * Node processes for multi-process tests and benchmarks: {@link io.kvpager.cluster.process.NodeProcess}
 * is the main a spawned JVM runs, {@link io.kvpager.cluster.process.SpawnedNode} the test's handle
 * on it (ready line, SIGKILL, clean close), {@link io.kvpager.cluster.process.TestClusters} names,
 * ports and the test JVM's own node.
 */
package io.kvpager.cluster.process;

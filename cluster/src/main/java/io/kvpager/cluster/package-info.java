/**
 * Clustered kvpager nodes: {@link io.kvpager.cluster.ClusterNode} starts a Vert.x joined to its
 * cluster through the Hazelcast cluster manager, from {@link io.kvpager.cluster.ClusterNodeOptions}
 * and the member config in {@code config/cluster.xml} (loopback, TCP-IP join, no multicast, no
 * join wait), optionally with TLS on the event bus. Rank workers and coordinators deployed in it
 * reach each other at the same addresses as in one process. {@link io.kvpager.cluster.ClusterDirectory}
 * lists the coordinated instances and the rank workers of the cluster, each entry tied to the node
 * that registered it and gone with it.
 *
 * <p>The only package that touches Hazelcast; the verticles follow membership and share GPU
 * budgets through Vert.x's cluster SPI and shared data alone, so a process that does not cluster
 * never loads Hazelcast.
 */
package io.kvpager.cluster;

/**
 * Cluster membership: which nodes are members and which serve a rank's address
 * ({@link io.kvpager.internal.membership.ClusterMembership}), and failing at once the requests to a rank
 * whose node left ({@link io.kvpager.internal.membership.RankNodes}, {@link io.kvpager.internal.membership.RankDeparted}).
 * The cluster manager's notices arrive on its own threads and are brought onto each subscriber's
 * context; {@code RankNodes} runs on the coordinator's event loop.
 */
package io.kvpager.internal.membership;

/**
 * The GPU budget shared by every cache on one physical GPU: the GPU's broker in the cluster's shared
 * data ({@link io.kvpager.impl.broker.GpuBroker}, {@link io.kvpager.impl.broker.GpuShares}), one pool's
 * leases on its GPUs ({@link io.kvpager.impl.broker.PoolBudget}, {@link io.kvpager.impl.broker.GpuLease}),
 * the recall of other pools' surplus ({@link io.kvpager.impl.broker.SurplusRecall}), the give-back
 * of departed owners' shares ({@link io.kvpager.impl.broker.DepartedShares}), and the sharing
 * policy: guarantees, borrowing and reclaim, decided by {@link io.kvpager.impl.broker.ShareArbiter}
 * and carried out between the pools by {@link io.kvpager.impl.broker.ShareReclaim} (docs/sharing.md). Runs on the
 * coordinator's event loop; the departed owners' give-back runs on an event-loop context of its
 * own, one per node, as the watch outlives any one verticle.
 */
package io.kvpager.impl.broker;

/**
 * The coordinator of one pool: the page ledger, the reserve of mapped pages, the fan-out of every
 * map and unmap to all ranks (all or none), quarantine of ranks whose rollback was incomplete, and
 * a rank's rejoin. {@link io.kvpager.impl.coordinator.LocalKvCache} is the {@code KvCache} over it;
 * {@link io.kvpager.impl.coordinator.CoordinatorEndpoint} serves the same calls on the event bus.
 * Runs on the coordinator's event loop (the context of its
 * {@link io.kvpager.impl.coordinator.CoordinatorVerticle}): a caller's request is brought onto it,
 * and the answer handed back to the caller's context. It reaches the rank workers over the event bus
 * only.
 */
package io.kvpager.impl.coordinator;

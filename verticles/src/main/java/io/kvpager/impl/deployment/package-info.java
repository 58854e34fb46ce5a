/**
 * What one node deploys for a rank: the worker verticle ({@code impl.worker}) together with the
 * node's duties that come with it, the give-back of departed owners' GPU shares
 * ({@code impl.broker}), wired to the cluster's membership. It is the one package that sees both
 * the worker and the broker, so that neither depends on the other; {@code io.kvpager.worker.RankWorker}
 * reaches it through {@link java.util.ServiceLoader}. Runs on the deploying caller's thread.
 */
package io.kvpager.impl.deployment;

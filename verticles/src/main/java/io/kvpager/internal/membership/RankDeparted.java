package io.kvpager.internal.membership;

/**
 * A request to a rank whose node has left the cluster: it was in flight when the node was removed,
 * or it was not sent because no live node serves the rank. The fan-out reports it as
 * {@link io.kvpager.FailureCode#NO_RANK}, as it does a rank with no worker at all.
 */
public final class RankDeparted extends RuntimeException {

    RankDeparted(String message) {
        super(message, null, false, false);
    }
}

package io.kvpager.protocol;


/**
 * One rank a pool's requests go to: pipeline stage {@code pp}, tensor-parallel rank {@code tp}.
 */
public record RankTarget(int pp, int tp) {

    public RankTarget {
        if (pp < 0 || tp < 0) {
            throw new IllegalArgumentException("a rank needs pp >= 0 and tp >= 0, got pp" + pp + "/tp" + tp);
        }
    }

    /** The rank's name in messages: {@code pp1/tp0}. */
    public String name() {
        return "pp" + pp + "/tp" + tp;
    }

    /** The rank worker's event-bus address: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public String address(String instance) {
        return WorkerProtocol.rankAddress(instance, pp, tp);
    }

    @Override
    public String toString() {
        return name();
    }
}

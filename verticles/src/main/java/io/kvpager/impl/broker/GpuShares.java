package io.kvpager.impl.broker;

import io.kvpager.protocol.Owner;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the pools on one GPU have taken of its budget, each pool's share under its owner: the value
 * the GPU's broker keeps in the cluster's shared data and replaces as a whole by compare-and-set, so
 * the shares always add up. Immutable; the text form is a JSON object
 * {@code {"<pool>": {"owner": "<nodeId>#<epoch>", "bytes": n, "guarantee": {"bytes"|"percent": n}, "capped": true,
 * "waitingUntilMs": t}, ...}}, where {@code guarantee} is absent for an equal split, {@code capped} when false and
 * {@code waitingUntilMs} (wall-clock ms until which the pool waits for memory reclaimed for it) when 0.
 *
 * @param shares pool name to its share, in the order the shares were first written
 */
public record GpuShares(Map<String, Share> shares) {

    public static final GpuShares NONE = new GpuShares(Map.of());

    /**
     * One pool's share: the owner that took it, its bytes, the guarantee the pool asks, and whether
     * it is capped at its guarantee for not giving back in time ({@link ShareArbiter}).
     */
    public record Share(Owner owner, long bytes, Guarantee guarantee, boolean capped, long waitingUntilMs) {
        public Share {
            if (owner == null || bytes < 0 || guarantee == null) {
                throw new IllegalArgumentException("a share needs an owner, 0 bytes or more and a guarantee, got " + owner + ", "
                        + bytes + " and " + guarantee);
            }
        }

        /** A share asking an equal split, not capped, not waiting. */
        public Share(Owner owner, long bytes) {
            this(owner, bytes, Guarantee.SPLIT, false, 0);
        }

        /** A share that is not waiting for a reclaim. */
        public Share(Owner owner, long bytes, Guarantee guarantee, boolean capped) {
            this(owner, bytes, guarantee, capped, 0);
        }

        /** Whether the pool waits, at {@code nowMs}, for memory reclaimed for it. */
        public boolean waiting(long nowMs) {
            return waitingUntilMs > nowMs;
        }

        Share withBytes(long next) {
            return new Share(owner, next, guarantee, capped, waitingUntilMs);
        }

        Share withCapped(boolean next) {
            return new Share(owner, bytes, guarantee, next, waitingUntilMs);
        }

        Share waitingUntil(long untilMs) {
            return new Share(owner, bytes, guarantee, capped, untilMs);
        }
    }

    public GpuShares {
        shares = Collections.unmodifiableMap(new LinkedHashMap<>(shares));
    }

    /** Reads the text form; {@code null} or empty text is no shares. A value that is not one fails clearly. */
    static GpuShares parse(String text) {
        if (text == null || text.isEmpty()) {
            return NONE;
        }
        try {
            JsonObject json = new JsonObject(text);
            Map<String, Share> shares = new LinkedHashMap<>();
            for (String pool : json.fieldNames()) {
                JsonObject share = json.getJsonObject(pool);
                shares.put(pool, new Share(Owner.parse(share.getString("owner")), share.getLong("bytes"),
                        Guarantee.fromJson(share.getJsonObject("guarantee")), share.getBoolean("capped", false),
                        share.getLong("waitingUntilMs", 0L)));
            }
            return new GpuShares(shares);
        } catch (DecodeException | ClassCastException | NullPointerException | IllegalArgumentException e) {
            throw new IllegalStateException("a GPU's shares in the cluster's shared data do not read: " + text, e);
        }
    }

    String encode() {
        JsonObject json = new JsonObject();
        shares.forEach((pool, share) -> {
            JsonObject one = new JsonObject().put("owner", share.owner().toString()).put("bytes", share.bytes());
            if (!share.guarantee().split()) {
                one.put("guarantee", share.guarantee().toJson());
            }
            if (share.capped()) {
                one.put("capped", true);
            }
            if (share.waitingUntilMs() != 0) {
                one.put("waitingUntilMs", share.waitingUntilMs());
            }
            json.put(pool, one);
        });
        return json.encode();
    }

    /** The bytes every pool has taken. */
    public long total() {
        long total = 0;
        for (Share share : shares.values()) {
            total += share.bytes();
        }
        return total;
    }

    /** The bytes every pool but {@code pool} has taken. */
    long others(String pool) {
        Share own = shares.get(pool);
        return total() - (own == null ? 0 : own.bytes());
    }

    /** {@code pool}'s share, or {@code null}. */
    public Share of(String pool) {
        return shares.get(pool);
    }

    /**
     * These shares with {@code pool}'s set to {@code bytes} under {@code owner}; the guarantee and
     * the cap stay as they were under the same owner (a new owner's share starts asking an equal
     * split, not capped).
     */
    GpuShares with(String pool, Owner owner, long bytes) {
        Share before = shares.get(pool);
        return before != null && before.owner().equals(owner) ? with(pool, before.withBytes(bytes)) : with(pool, new Share(owner, bytes));
    }

    /** These shares with {@code pool}'s replaced by {@code share}. */
    GpuShares with(String pool, Share share) {
        Map<String, Share> next = new LinkedHashMap<>(shares);
        next.put(pool, share);
        return new GpuShares(next);
    }

    GpuShares without(String pool) {
        Map<String, Share> next = new LinkedHashMap<>(shares);
        next.remove(pool);
        return new GpuShares(next);
    }

    /** These shares less every pool that {@code gone} holds. */
    GpuShares without(GpuShares gone) {
        Map<String, Share> next = new LinkedHashMap<>(shares);
        next.keySet().removeAll(gone.shares().keySet());
        return new GpuShares(next);
    }
}

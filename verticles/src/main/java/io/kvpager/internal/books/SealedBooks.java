package io.kvpager.internal.books;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.core.spi.cluster.ClusterManager;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Where a node opens the shared maps that decide memory: through a {@link SealedMap} keyed by its
 * cluster's book key when the node was given one before it joined ({@link #keep}), as the plain
 * shared map otherwise (a cluster without a secret, or a Vert.x that is not clustered). One state
 * per node and map, so that what a node proved of a record holds across every opening of the map.
 */
public final class SealedBooks {

    /** Weak in the cluster manager, as the node's other per-manager state is. */
    private static final Map<ClusterManager, Keyring> KEYS = new WeakHashMap<>();

    private SealedBooks() {
    }

    /** The key and what one node proved, per map. */
    private record Keyring(byte[] key, Map<String, Map<String, SealedMap.Proven>> proven, Map<String, Set<String>> warned) {
    }

    /**
     * Seals the books of the node that {@code manager} joins with {@code key}; call it before the
     * node joins, so that nothing opens a map unsealed.
     */
    public static void keep(ClusterManager manager, byte[] key) {
        if (key == null || key.length < 16) {
            throw new IllegalArgumentException("a book key needs at least 16 bytes");
        }
        synchronized (KEYS) {
            KEYS.put(manager, new Keyring(Arrays.copyOf(key, key.length), new ConcurrentHashMap<>(), new ConcurrentHashMap<>()));
        }
    }

    /** Whether {@code vertx}'s books are sealed. */
    public static boolean sealed(Vertx vertx) {
        return keyring(vertx) != null;
    }

    /** The shared map {@code name} of text values, sealed where the node's cluster has a secret. */
    public static Future<AsyncMap<String, String>> text(Vertx vertx, String name) {
        return open(vertx, name, false, Function.identity(), Function.identity());
    }

    /**
     * As {@link #text}, for a map whose records are never removed (a GPU's budget record): a
     * reader that proved a record of a key and then finds none takes it for a deletion by a member
     * and acts on the record it proved.
     */
    public static Future<AsyncMap<String, String>> keptText(Vertx vertx, String name) {
        return open(vertx, name, true, Function.identity(), Function.identity());
    }

    /** The shared map {@code name} of numbers whose records are never removed (a GPU's capacity), sealed (as text) as {@link #keptText}. */
    public static Future<AsyncMap<String, Long>> keptLongs(Vertx vertx, String name) {
        return open(vertx, name, true, String::valueOf, SealedBooks::parseLong);
    }

    private static <V> Future<AsyncMap<String, V>> open(Vertx vertx, String name, boolean kept, Function<V, String> encode,
                                                        Function<String, V> decode) {
        Keyring keys = keyring(vertx);
        if (keys == null) {
            return vertx.sharedData().getAsyncMap(name);
        }
        Map<String, SealedMap.Proven> proven = keys.proven().computeIfAbsent(name, n -> new ConcurrentHashMap<>());
        Set<String> warned = keys.warned().computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet());
        return vertx.sharedData().<String, String>getAsyncMap(name)
                .map(map -> new SealedMap<>(name, map, keys.key(), encode, decode, kept, proven, warned));
    }

    private static Keyring keyring(Vertx vertx) {
        if (!vertx.isClustered() || !(vertx instanceof VertxInternal internal) || internal.clusterManager() == null) {
            return null;
        }
        synchronized (KEYS) {
            return KEYS.get(internal.clusterManager());
        }
    }

    private static Long parseLong(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            // sealed by a holder of the secret, so not expected: fail the read rather than guess
            throw new IllegalStateException("a sealed number does not read: " + text, e);
        }
    }
}

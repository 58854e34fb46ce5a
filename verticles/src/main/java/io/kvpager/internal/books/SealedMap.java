package io.kvpager.internal.books;

import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A shared map whose every value carries a MAC keyed by the cluster's secret, over the map's name,
 * the record's key, its version and its value, so that a member of the membership that lacks the
 * secret can neither forge a record nor move one to another key or map. Stored text:
 * {@code <base64url HMAC-SHA256>:<version>:<value>}. Each write of a key seals the next version
 * after the one it replaces, so the versions of a key rise with its writes.
 *
 * <p>A reader never acts on a record whose MAC does not check. In a map whose records are kept
 * ({@code kept}: never removed, as a GPU's budget record) it does not act either on a record
 * older than one of the same key it has already proved (a replay: a member put back a record it
 * had copied), nor on the absence of a record it has proved (a deletion); in a map whose records
 * are removed (the directory) versions start again after a removal, so neither can be told there. It logs each once per key and falls back to what
 * the books can prove: the newest record of that key this node read or wrote with a good MAC, or
 * none when it has seen none. A write over such a record replaces it: a compare-and-set against
 * the value the reader was given ({@link #replaceIfPresent}) is made against the record it stands
 * for (the bad, the replayed one, or the empty place of the deleted one) under the next version,
 * and {@link #putIfAbsent} treats a bad record as absent. What versions cannot prove is said where
 * it is documented: a node that has never read a key cannot tell an older record of it from the
 * newest, nor a deleted record from one never written.
 *
 * @param <V> the value type, stored as text through {@code encode} and {@code decode}
 */
public final class SealedMap<V> implements AsyncMap<String, V> {

    private static final Logger log = LoggerFactory.getLogger(SealedMap.class);
    private static final int MAC_CHARS = 43;

    /** The newest record of a key this node proved: its version and value. */
    record Proven(long version, String value) {
    }

    /** What a reader acts on for a stored text: a value (or none) and the version it stands at. */
    private record Reading(String value, long version) {
    }

    private final String name;
    private final AsyncMap<String, String> map;
    private final SecretKeySpec key;
    private final Function<V, String> encode;
    private final Function<String, V> decode;
    private final boolean kept;
    /** Per key, the newest record with a good MAC this node read or wrote: what a bad, older or missing record falls back to. */
    private final Map<String, Proven> proven;
    /** Keys whose bad record was logged, until a good one is read again. */
    private final Set<String> warned;

    SealedMap(String name, AsyncMap<String, String> map, byte[] key, Function<V, String> encode, Function<String, V> decode,
              boolean kept, Map<String, Proven> proven, Set<String> warned) {
        this.name = name;
        this.map = map;
        this.key = new SecretKeySpec(key, "HmacSHA256");
        this.encode = encode;
        this.decode = decode;
        this.kept = kept;
        this.proven = proven;
        this.warned = warned;
    }

    /** A sealed map of text values over {@code map}, named {@code name} in the MAC; {@code kept}: its records are never removed. */
    public static SealedMap<String> ofText(String name, AsyncMap<String, String> map, byte[] key, boolean kept) {
        return new SealedMap<>(name, map, key, Function.identity(), Function.identity(), kept, new ConcurrentHashMap<>(),
                ConcurrentHashMap.newKeySet());
    }

    /** The sealed text of {@code value} under {@code k} at {@code version}. */
    String seal(String k, long version, String value) {
        return mac(k, version, value) + ":" + version + ":" + value;
    }

    /** What this node acts on for the stored text {@code stored} of {@code k}, remembering a newer good record as proven. */
    private Reading read(String k, String stored) {
        Proven known = proven.get(k);
        if (stored == null) {
            if (kept && known != null) {
                warn(k, "was deleted (this node proved version " + known.version() + " of it, and the map's records are never removed)");
                return new Reading(known.value(), known.version());
            }
            return new Reading(null, 0);
        }
        Proven opened = check(k, stored);
        if (opened == null) {
            warn(k, "does not carry the cluster's MAC (written by a member without the cluster secret, or corrupted)");
            return known == null ? new Reading(null, 0) : new Reading(known.value(), known.version());
        }
        if (kept && known != null && opened.version() < known.version()) {
            warn(k, "is version " + opened.version() + ", older than version " + known.version() + " this node proved (put back by a member)");
            return new Reading(known.value(), known.version());
        }
        prove(k, opened);
        return new Reading(opened.value(), opened.version());
    }

    private void warn(String k, String what) {
        if (warned.add(k)) {
            log.warn("shared map {}: the record of {} {}; it is ignored, and this node acts on {}", name, k, what,
                    proven.containsKey(k) ? "the newest record of it with a good MAC it has seen" : "none, as it has seen no record of it with a good MAC");
        }
    }

    /** The version and value of {@code stored} when its MAC checks, else {@code null}. */
    private Proven check(String k, String stored) {
        int colon = stored.indexOf(':');
        int second = colon < 0 ? -1 : stored.indexOf(':', colon + 1);
        if (colon != MAC_CHARS || second < 0) {
            return null;
        }
        long version;
        try {
            version = Long.parseLong(stored.substring(colon + 1, second));
        } catch (NumberFormatException e) {
            return null;
        }
        String value = stored.substring(second + 1);
        byte[] expected = mac(k, version, value).getBytes(StandardCharsets.US_ASCII);
        byte[] given = stored.substring(0, colon).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, given) ? new Proven(version, value) : null;
    }

    private String mac(String k, long version, String value) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            // lengths first, so that no split of name, key and value reads as another
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            byte[] kb = k.getBytes(StandardCharsets.UTF_8);
            mac.update(ByteBuffer.allocate(16).putInt(n.length).putInt(kb.length).putLong(version).array());
            mac.update(n);
            mac.update(kb);
            mac.update(value.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HMAC-SHA256 is not available: " + e.getMessage(), e);
        }
    }

    private V value(String text) {
        return text == null ? null : decode.apply(text);
    }

    /** The version a write of {@code k} seals next, as far as this node knows. */
    private long next(String k) {
        Proven known = proven.get(k);
        return known == null ? 1 : known.version() + 1;
    }

    private void wrote(String k, long version, String text) {
        prove(k, new Proven(version, text));
    }

    /**
     * Remembers {@code record} of {@code k} as proven: in a kept map only when it is the newest;
     * in a map whose records are removed, versions start again after a removal, so the last one
     * read or written is the one in force.
     */
    private void prove(String k, Proven record) {
        if (kept) {
            proven.merge(k, record, (before, now) -> now.version() >= before.version() ? now : before);
        } else {
            proven.put(k, record);
        }
        warned.remove(k);
    }

    @Override
    public Future<V> get(String k) {
        return map.get(k).map(stored -> value(read(k, stored).value()));
    }

    @Override
    public Future<Void> put(String k, V v) {
        return put(k, v, -1);
    }

    @Override
    public Future<Void> put(String k, V v, long ttl) {
        String text = encode.apply(v);
        long version = next(k);
        String sealed = seal(k, version, text);
        return (ttl < 0 ? map.put(k, sealed) : map.put(k, sealed, ttl)).onSuccess(done -> wrote(k, version, text));
    }

    @Override
    public Future<V> putIfAbsent(String k, V v) {
        return putIfAbsent(k, v, -1);
    }

    @Override
    public Future<V> putIfAbsent(String k, V v, long ttl) {
        String text = encode.apply(v);
        Proven known = proven.get(k);
        if (kept && known != null) {
            // this node proved a record of k: an empty place is a deleted record, and the caller decides again on the proven one
            return get(k);
        }
        long version = next(k);
        String sealed = seal(k, version, text);
        Future<String> put = ttl < 0 ? map.putIfAbsent(k, sealed) : map.putIfAbsent(k, sealed, ttl);
        return put.compose(before -> {
            if (before == null) {
                wrote(k, version, text);
                return Future.succeededFuture(null);
            }
            Reading reading = read(k, before);
            if (reading.value() != null) {
                // the record, or the proven one a bad or older record stands for: the caller decides again on it
                return Future.succeededFuture(value(reading.value()));
            }
            // a bad record stands for none: replace it, once, against exactly what was read
            return cas(k, before, sealed, ttl).compose(replaced -> {
                if (replaced) {
                    wrote(k, version, text);
                    return Future.<V>succeededFuture(null);
                }
                return get(k).map(now -> now == null ? v : now);
            });
        });
    }

    @Override
    public Future<V> remove(String k) {
        return map.remove(k).map(stored -> {
            Proven removed = stored == null ? null : check(k, stored);
            proven.remove(k);
            return value(removed == null ? null : removed.value());
        });
    }

    @Override
    public Future<Boolean> removeIfPresent(String k, V v) {
        String text = encode.apply(v);
        return map.get(k).compose(stored -> {
            Proven opened = stored == null ? null : check(k, stored);
            if (opened == null || !opened.value().equals(text)) {
                return Future.succeededFuture(false);
            }
            return map.removeIfPresent(k, stored).onSuccess(removed -> {
                if (removed) {
                    proven.remove(k);
                }
            });
        });
    }

    @Override
    public Future<V> replace(String k, V v) {
        return replace(k, v, -1);
    }

    @Override
    public Future<V> replace(String k, V v, long ttl) {
        String text = encode.apply(v);
        long version = next(k);
        String sealed = seal(k, version, text);
        return (ttl < 0 ? map.replace(k, sealed) : map.replace(k, sealed, ttl)).map(stored -> {
            if (stored == null) {
                return null;
            }
            wrote(k, version, text);
            Proven before = check(k, stored);
            return value(before == null ? null : before.value());
        });
    }

    @Override
    public Future<Boolean> replaceIfPresent(String k, V oldValue, V newValue) {
        return replaceIfPresent(k, oldValue, newValue, -1);
    }

    /**
     * Replaces the record of {@code k} when this node reads {@code oldValue} there: the record
     * itself, or the proven one a bad, older or (in a kept map) missing record stands for, which
     * the new one then replaces; sealed under the next version.
     */
    @Override
    public Future<Boolean> replaceIfPresent(String k, V oldValue, V newValue, long ttl) {
        String oldText = encode.apply(oldValue);
        String newText = encode.apply(newValue);
        Proven known = proven.get(k);
        if (known != null && known.value().equals(oldText)) {
            // the common case: the record is the one this node proved last
            long version = known.version() + 1;
            String sealed = seal(k, version, newText);
            return cas(k, seal(k, known.version(), oldText), sealed, ttl).compose(replaced -> {
                if (replaced) {
                    wrote(k, version, newText);
                    return Future.succeededFuture(true);
                }
                return replaceRead(k, oldText, newText, ttl);
            });
        }
        return replaceRead(k, oldText, newText, ttl);
    }

    /** As {@link #replaceIfPresent}, against the record read now. */
    private Future<Boolean> replaceRead(String k, String oldText, String newText, long ttl) {
        return map.get(k).compose(stored -> {
            Reading reading = read(k, stored);
            if (!oldText.equals(reading.value())) {
                return Future.succeededFuture(false);
            }
            long version = reading.version() + 1;
            String sealed = seal(k, version, newText);
            Future<Boolean> written = stored == null
                    ? (ttl < 0 ? map.putIfAbsent(k, sealed) : map.putIfAbsent(k, sealed, ttl)).map(before -> before == null)
                    : cas(k, stored, sealed, ttl);
            return written.onSuccess(done -> {
                if (done) {
                    wrote(k, version, newText);
                }
            });
        });
    }

    private Future<Boolean> cas(String k, String before, String after, long ttl) {
        return ttl < 0 ? map.replaceIfPresent(k, before, after) : map.replaceIfPresent(k, before, after, ttl);
    }

    @Override
    public Future<Void> clear() {
        return map.clear().onSuccess(done -> proven.clear());
    }

    @Override
    public Future<Integer> size() {
        return entries().map(Map::size);
    }

    @Override
    public Future<Set<String>> keys() {
        return entries().map(entries -> new HashSet<>(entries.keySet()));
    }

    @Override
    public Future<List<V>> values() {
        return entries().map(entries -> new ArrayList<>(entries.values()));
    }

    /**
     * The records whose MAC checks, or the proven ones they fall back to, and in a kept map the
     * proven records of keys that are missing; a key with none of these is left out.
     */
    @Override
    public Future<Map<String, V>> entries() {
        return map.entries().map(stored -> {
            Map<String, V> open = new HashMap<>();
            Set<String> seen = new HashSet<>(stored.keySet());
            stored.forEach((k, text) -> {
                String value = read(k, text).value();
                if (value != null) {
                    open.put(k, value(value));
                }
            });
            if (kept) {
                for (String k : Set.copyOf(proven.keySet())) {
                    if (!seen.contains(k)) {
                        String value = read(k, null).value();
                        if (value != null) {
                            open.put(k, value(value));
                        }
                    }
                }
            }
            return open;
        });
    }
}

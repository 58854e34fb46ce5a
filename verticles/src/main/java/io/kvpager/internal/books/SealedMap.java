package io.kvpager.internal.books;

import io.vertx.core.Future;
import io.vertx.core.shareddata.AsyncMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
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
 * the record's key and its value, so that a member of the membership that lacks the secret can
 * neither forge a record nor move one to another key or map. Stored text:
 * {@code <base64url HMAC-SHA256>:<value>}.
 *
 * <p>A reader never acts on a record whose MAC does not check: it logs it once per key and falls
 * back to what the books can prove, the last record of that key this node read or wrote with a
 * good MAC, or none when it has seen none. A write over such a record replaces it: a
 * compare-and-set against the value the reader was given ({@link #replaceIfPresent}) is made
 * against the bad record it stands for, and {@link #putIfAbsent} treats a bad record as absent.
 * What a MAC cannot stop is said where it is documented: a member can still delete a record or put
 * back an older one of the same key; it cannot make a reader take a value no holder of the secret
 * wrote.
 *
 * <p>The MAC is deterministic, so a compare-and-set against a value is a compare-and-set against
 * its sealed text, as on the plain map.
 *
 * @param <V> the value type, stored as text through {@code encode} and {@code decode}
 */
public final class SealedMap<V> implements AsyncMap<String, V> {

    private static final Logger log = LoggerFactory.getLogger(SealedMap.class);
    private static final int MAC_CHARS = 43;

    private final String name;
    private final AsyncMap<String, String> map;
    private final SecretKeySpec key;
    private final Function<V, String> encode;
    private final Function<String, V> decode;
    /** Per key, the last value with a good MAC this node read or wrote: what a bad record falls back to. */
    private final Map<String, String> proven;
    /** Keys whose bad record was logged, until a good one is read again. */
    private final Set<String> warned;

    SealedMap(String name, AsyncMap<String, String> map, byte[] key, Function<V, String> encode, Function<String, V> decode,
              Map<String, String> proven, Set<String> warned) {
        this.name = name;
        this.map = map;
        this.key = new SecretKeySpec(key, "HmacSHA256");
        this.encode = encode;
        this.decode = decode;
        this.proven = proven;
        this.warned = warned;
    }

    /** A sealed map of text values over {@code map}, named {@code name} in the MAC. */
    public static SealedMap<String> ofText(String name, AsyncMap<String, String> map, byte[] key) {
        return new SealedMap<>(name, map, key, Function.identity(), Function.identity(), new ConcurrentHashMap<>(),
                ConcurrentHashMap.newKeySet());
    }

    /** The sealed text of {@code value} under {@code k}. */
    String seal(String k, String value) {
        return mac(k, value) + ":" + value;
    }

    /**
     * The value of the sealed text {@code stored} under {@code k}: its own when the MAC checks
     * (remembered as proven), else the last proven one, or {@code null}.
     */
    private String open(String k, String stored) {
        if (stored == null) {
            return null;
        }
        String value = check(k, stored);
        if (value != null) {
            proven.put(k, value);
            warned.remove(k);
            return value;
        }
        if (warned.add(k)) {
            log.warn("shared map {}: the record of {} does not carry the cluster's MAC (written by a member without the cluster "
                    + "secret, or corrupted); it is ignored, and this node acts on {}", name, k,
                    proven.containsKey(k) ? "the last record of it with a good MAC" : "none, as it has seen no record of it with a good MAC");
        }
        return proven.get(k);
    }

    /** The value of {@code stored} when its MAC checks, else {@code null}. */
    private String check(String k, String stored) {
        int colon = stored.indexOf(':');
        if (colon != MAC_CHARS) {
            return null;
        }
        String value = stored.substring(colon + 1);
        byte[] expected = mac(k, value).getBytes(StandardCharsets.US_ASCII);
        byte[] given = stored.substring(0, colon).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, given) ? value : null;
    }

    private String mac(String k, String value) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            // lengths first, so that no split of name, key and value reads as another
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            byte[] kb = k.getBytes(StandardCharsets.UTF_8);
            mac.update(java.nio.ByteBuffer.allocate(8).putInt(n.length).putInt(kb.length).array());
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

    @Override
    public Future<V> get(String k) {
        return map.get(k).map(stored -> value(open(k, stored)));
    }

    @Override
    public Future<Void> put(String k, V v) {
        String text = encode.apply(v);
        return map.put(k, seal(k, text)).onSuccess(done -> proven.put(k, text));
    }

    @Override
    public Future<Void> put(String k, V v, long ttl) {
        String text = encode.apply(v);
        return map.put(k, seal(k, text), ttl).onSuccess(done -> proven.put(k, text));
    }

    @Override
    public Future<V> putIfAbsent(String k, V v) {
        return putIfAbsent(k, v, -1);
    }

    @Override
    public Future<V> putIfAbsent(String k, V v, long ttl) {
        String text = encode.apply(v);
        String sealed = seal(k, text);
        Future<String> put = ttl < 0 ? map.putIfAbsent(k, sealed) : map.putIfAbsent(k, sealed, ttl);
        return put.compose(before -> {
            if (before == null) {
                proven.put(k, text);
                return Future.succeededFuture(null);
            }
            String good = check(k, before);
            if (good != null) {
                return Future.succeededFuture(value(open(k, before)));
            }
            String fallback = open(k, before);
            if (fallback != null) {
                // the reader acts on the proven record: the caller decides again on it
                return Future.succeededFuture(value(fallback));
            }
            // a bad record stands for none: replace it, once, against exactly what was read
            return map.replaceIfPresent(k, before, sealed).compose(replaced -> {
                if (replaced) {
                    proven.put(k, text);
                    return Future.<V>succeededFuture(null);
                }
                return get(k).map(now -> now == null ? v : now);
            });
        });
    }

    @Override
    public Future<V> remove(String k) {
        return map.remove(k).map(stored -> {
            String value = stored == null ? null : check(k, stored);
            proven.remove(k);
            return value(value);
        });
    }

    @Override
    public Future<Boolean> removeIfPresent(String k, V v) {
        String text = encode.apply(v);
        return map.removeIfPresent(k, seal(k, text)).onSuccess(removed -> {
            if (removed) {
                proven.remove(k, text);
            }
        });
    }

    @Override
    public Future<V> replace(String k, V v) {
        String text = encode.apply(v);
        return map.replace(k, seal(k, text)).map(stored -> {
            String before = stored == null ? null : check(k, stored);
            proven.put(k, text);
            return value(before);
        });
    }

    @Override
    public Future<V> replace(String k, V v, long ttl) {
        String text = encode.apply(v);
        return map.replace(k, seal(k, text), ttl).map(stored -> {
            String before = stored == null ? null : check(k, stored);
            proven.put(k, text);
            return value(before);
        });
    }

    @Override
    public Future<Boolean> replaceIfPresent(String k, V oldValue, V newValue) {
        return replaceIfPresent(k, oldValue, newValue, -1);
    }

    @Override
    public Future<Boolean> replaceIfPresent(String k, V oldValue, V newValue, long ttl) {
        String oldText = encode.apply(oldValue);
        String newText = encode.apply(newValue);
        String sealed = seal(k, newText);
        return cas(k, seal(k, oldText), sealed, ttl).compose(replaced -> {
            if (replaced) {
                proven.put(k, newText);
                return Future.succeededFuture(true);
            }
            // the old value may be the proven one this node was given for a bad record: set against that record
            return map.get(k).compose(stored -> {
                if (stored == null || check(k, stored) != null || !oldText.equals(open(k, stored))) {
                    return Future.succeededFuture(false);
                }
                return cas(k, stored, sealed, ttl).onSuccess(done -> {
                    if (done) {
                        proven.put(k, newText);
                    }
                });
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

    /** The records whose MAC checks, or the proven ones they fall back to; a key with neither is left out. */
    @Override
    public Future<Map<String, V>> entries() {
        return map.entries().map(stored -> {
            Map<String, V> open = new HashMap<>();
            stored.forEach((k, text) -> {
                String value = open(k, text);
                if (value != null) {
                    open.put(k, value(value));
                }
            });
            return open;
        });
    }
}

package io.kvpager.impl.coordinator;

import io.kvpager.LimitResult;
import io.kvpager.internal.books.SealedBooks;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;

/**
 * The last memory limit set at run time on each cache, kept in the cluster's shared data with the
 * instance, so that a coordinator restarted (or a new incarnation of a displaced one) applies it:
 * async map {@value #LIMITS} from {@code <instance>.group<g>} to {@code {"bytes": n, "revision": r}}.
 * A record only moves to a higher revision, by compare-and-set, so two coordinators of one
 * instance on two sides of a split leave the later change. Only in a cluster: a Vert.x of its own
 * keeps the options' limit, as before.
 *
 * <p>A limit decides memory, so with a cluster secret its records are sealed like the budget's
 * ({@link SealedBooks#keptText}: they are never removed): a member without the secret cannot make
 * a coordinator apply a limit of its writing, and a node that proved a newer record of a cache
 * ignores an older one put back, or its deletion.
 */
final class InstanceLimits {

    /** The async map of cache to its last limit. */
    static final String LIMITS = "kvpager.limits";
    private static final int MAX_ROUNDS = 16;

    private final Vertx vertx;
    private final String key;

    InstanceLimits(Vertx vertx, String instance, int group) {
        this.vertx = vertx;
        this.key = instance + ".group" + group;
    }

    /** Whether limits are kept: only in a cluster. */
    boolean kept() {
        return vertx.isClustered();
    }

    /** The last limit recorded for this cache, or {@code null}. */
    Future<LimitResult> last() {
        return map().compose(m -> m.get(key)).map(text -> {
            if (text == null) {
                return null;
            }
            JsonObject json = new JsonObject(text);
            return new LimitResult(LimitResult.Outcome.APPLIED, json.getLong("revision"), json.getLong("bytes"), -1, -1);
        });
    }

    /** Records {@code change} unless a change of a revision at least as high is recorded already. */
    Future<Void> record(LimitResult change) {
        String text = new JsonObject().put("bytes", change.limitBytes()).put("revision", change.revision()).encode();
        return map().compose(m -> write(m, change.revision(), text, 0));
    }

    private Future<Void> write(AsyncMap<String, String> map, long revision, String text, int round) {
        return map.get(key).compose(before -> {
            if (before != null && new JsonObject(before).getLong("revision") >= revision) {
                return Future.succeededFuture();
            }
            Future<Boolean> written = before == null ? map.putIfAbsent(key, text).map(previous -> previous == null)
                    : map.replaceIfPresent(key, before, text);
            return written.compose(done -> done || round >= MAX_ROUNDS ? Future.<Void>succeededFuture()
                    : write(map, revision, text, round + 1));
        });
    }

    private Future<AsyncMap<String, String>> map() {
        return SealedBooks.keptText(vertx, LIMITS);
    }
}

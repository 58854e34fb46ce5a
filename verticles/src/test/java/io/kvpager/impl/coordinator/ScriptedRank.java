package io.kvpager.impl.coordinator;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A stand-in for a rank worker at its address, keeping the worker contract's state (tensors, mapped
 * pages) and answering as a worker would, unless told otherwise for the next requests of an
 * action: fail with a code, stay silent (with or without applying the request), or answer
 * {@code created: false}.
 */
final class ScriptedRank {

    /** What the rank does with one scripted request. */
    sealed interface Step permits Fail, Silent, NotYet, Dropped {
    }

    /**
     * Drops the request unhandled, answering as Vert.x does for a consumer that discards what is
     * queued for it when it is unregistered: a {@code TIMEOUT} reply failure before any timer expired.
     */
    record Dropped() implements Step {
    }

    /** Fails the request with {@code code} and a worker-style message. */
    record Fail(int code, String error) implements Step {
    }

    /** Answers nothing; {@code apply} says whether the request still takes effect. */
    record Silent(boolean apply) implements Step {
    }

    /** Answers {@code tensors-created} with {@code created: false}. */
    record NotYet() implements Step {
    }

    final RankTarget rank;
    final Set<Integer> mapped = new TreeSet<>();
    final List<JsonObject> received = new ArrayList<>();
    boolean tensors;
    private final Map<String, Deque<Step>> scripts = new HashMap<>();
    private final Map<String, Step> standing = new HashMap<>();
    private final MessageConsumer<JsonObject> consumer;

    private ScriptedRank(Vertx vertx, String instance, RankTarget rank) {
        this.rank = rank;
        this.consumer = vertx.eventBus().consumer(rank.address(instance), this::handle);
    }

    static Future<ScriptedRank> start(Vertx vertx, String instance, RankTarget rank) {
        ScriptedRank r = new ScriptedRank(vertx, instance, rank);
        return r.consumer.completion().map(r);
    }

    static Future<List<ScriptedRank>> startAll(Vertx vertx, PoolRanks pool) {
        List<Future<ScriptedRank>> started = new ArrayList<>();
        for (RankTarget rank : pool.ranks()) {
            started.add(start(vertx, pool.instance(), rank));
        }
        return Future.all(started).map(all -> {
            List<ScriptedRank> ranks = new ArrayList<>();
            started.forEach(f -> ranks.add(f.result()));
            return ranks;
        });
    }

    /** The next {@code steps.length} requests of {@code action} follow these steps. */
    synchronized ScriptedRank script(String action, Step... steps) {
        Deque<Step> queue = scripts.computeIfAbsent(action, a -> new ArrayDeque<>());
        for (Step s : steps) {
            queue.add(s);
        }
        return this;
    }

    /** Every request of {@code action} from now on, once the scripted ones are used, follows {@code step}; null to stop. */
    synchronized ScriptedRank always(String action, Step step) {
        if (step == null) {
            standing.remove(action);
        } else {
            standing.put(action, step);
        }
        return this;
    }

    synchronized List<JsonObject> received(String action) {
        List<JsonObject> out = new ArrayList<>();
        for (JsonObject r : received) {
            if (action.equals(r.getString("action"))) {
                out.add(r);
            }
        }
        return out;
    }

    Future<Void> stop() {
        return consumer.unregister();
    }

    private void handle(Message<JsonObject> message) {
        String action = message.headers().get(RankFanOut.ACTION);
        JsonObject body = message.body();
        Step step;
        synchronized (this) {
            received.add(body.copy().put("action", action));
            Deque<Step> queue = scripts.get(action);
            step = queue == null ? null : queue.poll();
            if (step == null) {
                step = standing.get(action);
            }
        }
        if (step instanceof Fail fail) {
            message.fail(fail.code(), rank.name() + " group " + body.getValue("group") + ": " + fail.error());
            return;
        }
        if (step instanceof Silent silent) {
            if (silent.apply()) {
                apply(action, body);
            }
            return;
        }
        if (step instanceof Dropped) {
            message.reply(new ReplyException(ReplyFailure.TIMEOUT, "Discarded the request. address: " + message.replyAddress()
                    + ", repliedAddress: " + message.address()));
            return;
        }
        if (step instanceof NotYet) {
            message.reply(new JsonObject().put("created", false));
            return;
        }
        String conflict = conflict(action, body);
        if (conflict != null) {
            message.fail(409, conflict);
            return;
        }
        message.reply(apply(action, body));
    }

    private synchronized String conflict(String action, JsonObject body) {
        if (!"map".equals(action) && !"unmap".equals(action)) {
            return null;
        }
        for (Object p : body.getJsonArray("pages")) {
            boolean isMapped = mapped.contains((Integer) p);
            if ("map".equals(action) && isMapped) {
                return rank.name() + " group " + body.getValue("group") + " page " + p + ": already mapped";
            }
            if ("unmap".equals(action) && !isMapped) {
                return rank.name() + " group " + body.getValue("group") + " page " + p + ": not mapped";
            }
        }
        return null;
    }

    private synchronized JsonObject apply(String action, JsonObject body) {
        switch (action) {
            case "create-tensors" -> {
                tensors = true;
                return new JsonObject().put("created", true).put("group", body.getValue("group")).put("granularity", 2L << 20);
            }
            case "tensors-created" -> {
                return new JsonObject().put("created", tensors);
            }
            case "map", "unmap" -> {
                if (conflict(action, body) != null) {
                    return new JsonObject();
                }
                JsonArray pages = body.getJsonArray("pages");
                for (Object p : pages) {
                    if ("map".equals(action)) {
                        mapped.add((Integer) p);
                    } else {
                        mapped.remove((Integer) p);
                    }
                }
                return new JsonObject().put("map".equals(action) ? "mapped" : "unmapped", pages.copy());
            }
            case "destroy-tensors" -> {
                boolean had = tensors;
                tensors = false;
                mapped.clear();
                return new JsonObject().put("destroyed", had);
            }
            case "stats" -> {
                return new JsonObject().put("rank", rank.name()).put("device", "scripted")
                        .put("groups", new JsonObject()).put("handlesAlive", mapped.size())
                        .put("deviceUsedBytes", 0L).put("deviceFreeBytes", 0L).put("deviceTotalBytes", 0L);
            }
            default -> {
                return new JsonObject();
            }
        }
    }
}

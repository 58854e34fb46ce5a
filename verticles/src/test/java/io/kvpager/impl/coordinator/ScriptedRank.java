package io.kvpager.impl.coordinator;

import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.cache.RankFailure;
import io.kvpager.protocol.CreateTensorsReply;
import io.kvpager.protocol.DestroyTensorsReply;
import io.kvpager.protocol.PagesReply;
import io.kvpager.protocol.RankFailureReply;
import io.kvpager.protocol.StatsReply;
import io.kvpager.protocol.TensorsCreatedReply;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A stand-in for a rank worker at its address, keeping the worker contract's state (tensors, mapped
 * pages) and answering as a worker would, with the protocol's records, unless told otherwise for the next requests of an
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

    /**
     * Fails the request with {@code code} and a worker-style message; to a sender that asks for
     * fields, with {@code rollbackComplete} and {@code unrestoredPages} as given.
     */
    record Fail(int code, String error, boolean rollbackComplete, List<Integer> unrestoredPages) implements Step {

        /** A failure whose rollback was complete. */
        Fail(int code, String error) {
            this(code, error, true, List.of());
        }
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
        RankFailureReply.registerCodec(vertx.eventBus());
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

    /** The pages this rank holds mapped now, in order. */
    synchronized int[] mappedNow() {
        return mapped.stream().mapToInt(Integer::intValue).toArray();
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
        String action = message.headers().get(WorkerAction.HEADER);
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
            String text = rank.name() + " group " + body.getValue("group") + ": " + fail.error();
            if (WorkerProtocol.FAILURE_FIELDS_JSON.equals(message.headers().get(WorkerProtocol.FAILURE_FIELDS_HEADER))) {
                RankFailure failure = new RankFailure(rank.name(), FailureCode.of(fail.code()), text, body.getInteger("group", -1),
                        RankFailure.NONE, null, fail.rollbackComplete(), fail.unrestoredPages());
                message.reply(new RankFailureReply(failure), new DeliveryOptions().setCodecName(RankFailureReply.CODEC_NAME));
            } else {
                message.fail(fail.code(), text);
            }
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
            message.reply(new TensorsCreatedReply(false).toJson());
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
                return new CreateTensorsReply(body.getInteger("group"), 2L << 20, null, 0, 0, null).toJson();
            }
            case "tensors-created" -> {
                return new TensorsCreatedReply(tensors).toJson();
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
                int[] ids = pages.stream().mapToInt(p -> (Integer) p).toArray();
                return ("map".equals(action) ? PagesReply.mapped(ids) : PagesReply.unmapped(ids)).toJson();
            }
            case "release-pages" -> {
                int[] ids = body.getJsonArray("pages").stream().mapToInt(p -> (Integer) p).toArray();
                int[] released = Arrays.stream(ids).filter(mapped::remove).toArray();
                return PagesReply.released(released, ids).toJson();
            }
            case "destroy-tensors" -> {
                boolean had = tensors;
                tensors = false;
                mapped.clear();
                return new DestroyTensorsReply(had).toJson();
            }
            case "stats" -> {
                return new StatsReply(rank.name(), "scripted", "scripted", Thread.currentThread().getName(), Map.of(), mapped.size(),
                        0, 0, List.of(), 0, 0, 0, 0).toJson();
            }
            default -> {
                return new JsonObject();
            }
        }
    }
}

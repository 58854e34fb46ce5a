package io.kvpager.protocol;

import io.kvpager.cache.RankFailure;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonObject;

import java.util.List;

/**
 * The event-bus protocol of a rank worker, for a client that sends it requests itself.
 *
 * <p>A worker of cache {@code instance}, stage {@code pp}, tensor-parallel rank {@code tp} listens
 * at {@link #rankAddress}; every request is a JSON object with the action in the
 * {@link #ACTION_HEADER} header, and is answered with a JSON object or a failure whose failure code
 * is a {@link io.kvpager.FailureCode} ({@code 400}, {@code 404}, {@code 409}, {@code 500},
 * {@code 503}, {@code 507}) and whose message names the rank, group, page and driver error.
 *
 * <p>A client that wants those facts as fields, instead of reading the message, asks for them
 * with {@link #askForFailureFields}: the failure then arrives as a {@code ReplyException} that
 * {@link #failureOf} turns into a {@link RankFailure}, with the same code and message.
 */
public final class WorkerProtocol {

    /** The message header that names the action. */
    public static final String ACTION_HEADER = "action";
    /**
     * The request header that asks for a failure with fields ({@value #FAILURE_FIELDS_JSON}); without
     * it a failure is a plain {@code ReplyException}, its code and message only.
     */
    public static final String FAILURE_FIELDS_HEADER = "failure-fields";
    /** The one value of {@link #FAILURE_FIELDS_HEADER}: the fields as the JSON of {@code docs/protocol.md}. */
    public static final String FAILURE_FIELDS_JSON = "json";

    /** Reserve a group's virtual ranges (and map its zero page, when asked). */
    public static final String CREATE_TENSORS = "create-tensors";
    /** Whether a group's tensors exist on the rank (and belong to an owner). */
    public static final String TENSORS_CREATED = "tensors-created";
    /** Back page ids with physical memory, all or nothing. */
    public static final String MAP = "map";
    /** Give page ids' physical memory back, all or nothing. */
    public static final String UNMAP = "unmap";
    /** Unmap and release each listed page id the rank holds, whatever its state. */
    public static final String RELEASE_PAGES = "release-pages";
    /** Keep a number of page ids' worth of unmapped handles idle for a group, on top of its pool options. */
    public static final String KEEP_HANDLES = "keep-handles";
    /** Unmap everything of a group and free its virtual ranges. */
    public static final String DESTROY_TENSORS = "destroy-tensors";
    /** Mapped pages and handles per group, device memory. */
    public static final String STATS = "stats";
    /** Where a group's blocks are in the worker's address space. */
    public static final String VIEWS = "views";

    /**
     * The field of a worker's answer to an owner's map, unmap, release-pages or tensors-created
     * that says how long, at least, from the moment it answered, the worker keeps the group for
     * that owner: its lease grace while the owner's node is a member, what is left of the grace
     * once it saw the node leave. A worker that follows no cluster leaves it out: nobody's lease
     * ends there.
     */
    public static final String LEASE_MS = "leaseMs";
    /** What a rank's liveness probe address adds to its rank address: see {@link #aliveAddress}. */
    private static final String ALIVE_SUFFIX = ".alive";

    /** Every action a worker answers, in the order of {@code docs/protocol.md}. */
    public static final List<String> ACTIONS = WorkerAction.wireNames();

    private WorkerProtocol() {
    }

    /** The address of a rank worker: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public static String rankAddress(String instance, int pp, int tp) {
        return BusAddress.rank(instance, pp, tp);
    }

    /**
     * Where a rank worker in a cluster answers a liveness probe, {@code kvpager.<instance>.pp<P>.tp<R>.alive}:
     * any body, answered with {@code {"rank": "pp<P>/tp<R>"}} from an event loop of the worker's
     * process, not from the rank's thread, so that a rank busy in a long driver call still answers
     * and only a process that does not run (paused, cut off) stays silent.
     */
    public static String aliveAddress(String rankAddress) {
        return rankAddress + ALIVE_SUFFIX;
    }

    /**
     * The lease an answer states ({@link #LEASE_MS}), in ms, or {@code -1} when it states none.
     *
     * @throws IllegalArgumentException when the field is there but not a whole number of 0 or more
     */
    public static long leaseMsOf(JsonObject answer) {
        Object value = answer == null ? null : answer.getValue(LEASE_MS);
        if (value == null) {
            return -1;
        }
        if (!(value instanceof Integer || value instanceof Long) || ((Number) value).longValue() < 0) {
            throw new IllegalArgumentException(LEASE_MS + " must be a whole number of ms, 0 or more, got " + value);
        }
        return ((Number) value).longValue();
    }

    /** The address of a cache's coordinator: {@code kvpager.<instance>.coordinator}. */
    public static String coordinatorAddress(String instance) {
        return BusAddress.coordinator(instance);
    }

    /**
     * Asks, on {@code delivery}, for a failure with fields, and teaches {@code bus} to read them
     * (once per event bus; again is harmless).
     *
     * @return {@code delivery}
     */
    public static DeliveryOptions askForFailureFields(EventBus bus, DeliveryOptions delivery) {
        RankFailureReply.registerCodec(bus);
        return delivery.addHeader(FAILURE_FIELDS_HEADER, FAILURE_FIELDS_JSON);
    }

    /**
     * The rank failure a request failed with, as fields; {@code null} when {@code error} is not a
     * worker's failure with fields (a timeout, no worker at the address, or a request sent without
     * {@link #askForFailureFields}).
     */
    public static RankFailure failureOf(Throwable error) {
        return error instanceof RankFailureReply reply ? reply.failure() : null;
    }
}

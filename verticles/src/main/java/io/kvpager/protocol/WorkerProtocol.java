package io.kvpager.protocol;

import io.kvpager.cache.RankFailure;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;

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

    /** Every action a worker answers, in the order of {@code docs/protocol.md}. */
    public static final List<String> ACTIONS = List.of(CREATE_TENSORS, TENSORS_CREATED, MAP, UNMAP, RELEASE_PAGES,
            KEEP_HANDLES, DESTROY_TENSORS, STATS, VIEWS);

    private WorkerProtocol() {
    }

    /** The address of a rank worker: {@code kvpager.<instance>.pp<P>.tp<R>}. */
    public static String rankAddress(String instance, int pp, int tp) {
        return "kvpager." + instance + ".pp" + pp + ".tp" + tp;
    }

    /** The address of a cache's coordinator: {@code kvpager.<instance>.coordinator}. */
    public static String coordinatorAddress(String instance) {
        return "kvpager." + instance + ".coordinator";
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

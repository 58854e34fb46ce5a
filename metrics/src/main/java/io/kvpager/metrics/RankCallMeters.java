package io.kvpager.metrics;

import io.kvpager.FailureCode;
import io.kvpager.protocol.BusAddress;
import io.kvpager.protocol.CoordinatorAction;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.protocol.WorkerProtocol;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryContext;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Latency of kvpager's event-bus calls, as histograms with Prometheus buckets, measured where they
 * meet the event bus of this process, since the coordinator and workers keep no timers of their
 * own:
 * <ul>
 *   <li>{@value #CALLS}: map and unmap requests a coordinator here sends to a rank
 *       ({@code kvpager.<instance>.pp<P>.tp<R>}), from request to answer, by outcome, and
 *       {@value #FAILURES} by failure code;</li>
 *   <li>{@value #SERVED}: requests a rank worker here answers, by action: its own service time;</li>
 *   <li>{@value #ALLOC_REQUESTS}: alloc requests a coordinator here answers for engines in other
 *       processes ({@code kvpager.<instance>.coordinator}).</li>
 * </ul>
 * An outbound interceptor notes a request under its reply address and an inbound one times the
 * reply there (the caller's view), and the other way round for the server's view.
 *
 * <p>A request whose answer never comes through the bus (a send timeout is raised locally) is
 * forgotten after {@link #FORGET_AFTER_NANOS}; the coordinator reports it as a TIMEOUT failure.
 */
public final class RankCallMeters {

    public static final String CALLS = "kvpager.rank.calls";
    public static final String FAILURES = "kvpager.rank.failures";
    public static final String SERVED = "kvpager.rank.served";
    public static final String ALLOC_REQUESTS = "kvpager.alloc.requests";
    private static final Set<String> TIMED = Set.of(WorkerAction.MAP.wireName(), WorkerAction.UNMAP.wireName());
    /** The action tag of a request whose action header names no action of the protocol: one meter for all of them. */
    static final String UNKNOWN_ACTION = "unknown";
    private static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);

    private record Call(String instance, String rank, String action, long startNanos) {
    }

    private final MeterRegistry registry;
    private final Map<String, Call> pending = new ConcurrentHashMap<>();
    private final Map<String, Call> serving = new ConcurrentHashMap<>();
    private final Handler<DeliveryContext<Object>> outbound = this::onOutbound;
    private final Handler<DeliveryContext<Object>> inbound = this::onInbound;

    public RankCallMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Starts measuring the calls on {@code bus}. */
    public void install(EventBus bus) {
        bus.addOutboundInterceptor(outbound);
        bus.addInboundInterceptor(inbound);
    }

    /** Takes the interceptors off the bus and removes the meters. */
    public void remove(EventBus bus) {
        bus.removeOutboundInterceptor(outbound);
        bus.removeInboundInterceptor(inbound);
        pending.clear();
        serving.clear();
        for (String name : List.of(CALLS, FAILURES, SERVED, ALLOC_REQUESTS)) {
            for (Meter meter : registry.find(name).meters()) {
                registry.remove(meter);
            }
        }
    }

    /** Drops requests that have waited too long for an answer to still get one. */
    public void forgetStale() {
        long now = System.nanoTime();
        pending.values().removeIf(call -> now - call.startNanos() > FORGET_AFTER_NANOS);
        serving.values().removeIf(call -> now - call.startNanos() > FORGET_AFTER_NANOS);
    }

    int pending() {
        return pending.size() + serving.size();
    }

    private void onOutbound(DeliveryContext<Object> context) {
        Call served = serving.remove(context.message().address());
        if (served != null) {
            String outcome = context.body() instanceof ReplyException ? "failed" : "ok";
            boolean alloc = served.rank() == null;
            LatencyTimers.histogram(alloc ? ALLOC_REQUESTS : SERVED, alloc
                            ? "Alloc requests this process's coordinator answered for engines elsewhere, from request to answer"
                            : "Requests this process's rank worker answered, from request to answer: its own service time")
                    .tags("instance", served.instance(), "rank", alloc ? "" : served.rank(), "action", served.action(), "outcome", outcome)
                    .register(registry).record(System.nanoTime() - served.startNanos(), TimeUnit.NANOSECONDS);
        }
        onRequest(context);
    }

    private void onInbound(DeliveryContext<Object> context) {
        Message<Object> message = context.message();
        String action = message.headers().get(WorkerProtocol.ACTION_HEADER);
        if (action != null && message.replyAddress() != null) {
            switch (BusAddress.parse(message.address())) {
                // the header comes from whoever sent the request: only the protocol's actions become tag values
                case BusAddress.Rank rank -> serving.put(message.replyAddress(), new Call(rank.instance(), rank.rankName(),
                        WorkerProtocol.ACTIONS.contains(action) ? action : UNKNOWN_ACTION, System.nanoTime()));
                case BusAddress.Coordinator coordinator when CoordinatorAction.ALLOC.wireName().equals(action) ->
                        serving.put(message.replyAddress(), new Call(coordinator.instance(), null, action, System.nanoTime()));
                case null, default -> { }
            }
        }
        onReply(context);
    }

    private void onRequest(DeliveryContext<Object> context) {
        Message<Object> message = context.message();
        String action = message.headers().get(WorkerProtocol.ACTION_HEADER);
        if (action != null && TIMED.contains(action) && message.replyAddress() != null
                && BusAddress.parse(message.address()) instanceof BusAddress.Rank rank) {
            pending.put(message.replyAddress(), new Call(rank.instance(), rank.rankName(), action, System.nanoTime()));
        }
        context.next();
    }

    private void onReply(DeliveryContext<Object> context) {
        Call call = pending.remove(context.message().address());
        if (call != null) {
            long nanos = System.nanoTime() - call.startNanos();
            String outcome = "ok";
            if (context.body() instanceof ReplyException failure) {
                outcome = "failed";
                Counter.builder(FAILURES).description("Rank failures of map and unmap requests, by failure code")
                        .tags("instance", call.instance(), "rank", call.rank(), "action", call.action(),
                                "code", FailureCode.of(failure.failureCode()).name())
                        .register(registry).increment();
            }
            LatencyTimers.histogram(CALLS, "Map and unmap requests to a rank, from request to answer")
                    .tags("instance", call.instance(), "rank", call.rank(), "action", call.action(), "outcome", outcome)
                    .register(registry).record(nanos, TimeUnit.NANOSECONDS);
        }
        context.next();
    }
}

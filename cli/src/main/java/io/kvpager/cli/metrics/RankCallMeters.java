package io.kvpager.cli.metrics;

import io.kvpager.FailureCode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Map and unmap latency per rank, and the ranks' failures by code, measured where the
 * coordinator's fan-out meets the event bus, since the coordinator keeps no timers of its own: an
 * outbound interceptor notes each {@code map} or {@code unmap} request sent to a rank's address
 * ({@code kvpager.<instance>.pp<P>.tp<R>}) under its reply address, and an inbound interceptor
 * times the reply delivered there and counts it by outcome and failure code.
 *
 * <p>A request whose answer never comes through the bus (a send timeout is raised locally) is
 * forgotten after {@link #FORGET_AFTER_NANOS}; the coordinator reports it as a TIMEOUT failure.
 */
final class RankCallMeters {

    static final String CALLS = "kvpager.rank.calls";
    static final String FAILURES = "kvpager.rank.failures";
    private static final Pattern RANK = Pattern.compile("kvpager\\.([A-Za-z0-9_-]+)\\.pp(\\d+)\\.tp(\\d+)");
    private static final Set<String> TIMED = Set.of("map", "unmap");
    private static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);

    private record Call(String instance, String rank, String action, long startNanos) {
    }

    private final MeterRegistry registry;
    private final Map<String, Call> pending = new ConcurrentHashMap<>();
    private final Handler<DeliveryContext<Object>> requests = this::onRequest;
    private final Handler<DeliveryContext<Object>> replies = this::onReply;

    RankCallMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    void install(EventBus bus) {
        bus.addOutboundInterceptor(requests);
        bus.addInboundInterceptor(replies);
    }

    /** Takes the interceptors off the bus and removes the meters. */
    void remove(EventBus bus) {
        bus.removeOutboundInterceptor(requests);
        bus.removeInboundInterceptor(replies);
        pending.clear();
        for (String name : List.of(CALLS, FAILURES)) {
            for (Meter meter : registry.find(name).meters()) {
                registry.remove(meter);
            }
        }
    }

    /** Drops requests that have waited too long for an answer to still get one. */
    void forgetStale() {
        long now = System.nanoTime();
        pending.values().removeIf(call -> now - call.startNanos() > FORGET_AFTER_NANOS);
    }

    int pending() {
        return pending.size();
    }

    private void onRequest(DeliveryContext<Object> context) {
        Message<Object> message = context.message();
        String action = message.headers().get("action");
        if (action != null && TIMED.contains(action) && message.replyAddress() != null && message.address().startsWith("kvpager.")) {
            Matcher rank = RANK.matcher(message.address());
            if (rank.matches()) {
                pending.put(message.replyAddress(), new Call(rank.group(1), "pp" + rank.group(2) + "/tp" + rank.group(3), action,
                        System.nanoTime()));
            }
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
            Timer.builder(CALLS).description("Map and unmap requests to a rank, from request to answer")
                    .tags("instance", call.instance(), "rank", call.rank(), "action", call.action(), "outcome", outcome)
                    .register(registry).record(nanos, TimeUnit.NANOSECONDS);
        }
        context.next();
    }
}

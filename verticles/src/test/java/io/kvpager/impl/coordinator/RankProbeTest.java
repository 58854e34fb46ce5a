package io.kvpager.impl.coordinator;

import io.kvpager.FailureCode;
import io.kvpager.protocol.PoolRanks;
import io.kvpager.protocol.StatsRequest;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rank whose request goes unanswered is probed on its liveness address: silent there too (its
 * process does not run), the request fails as the rank's {@code TIMEOUT} once the probe's timeout
 * passes, long before the send timeout; answering there (its thread is busy), the request waits
 * for the send timeout; without a probe consumer at all, the send timeout decides too.
 */
@ExtendWith(VertxExtension.class)
class RankProbeTest {

    private static final long AFTER_MS = 100;
    private static final long PROBE_TIMEOUT_MS = 100;
    private static final long SEND_TIMEOUT_MS = 1_500;

    private static RankReply statsOfOneRank(Vertx vertx, String instance) throws Exception {
        PoolRanks pool = new PoolRanks(instance, List.of(0), 1, 0);
        Promise<List<RankReply>> replies = Promise.promise();
        vertx.getOrCreateContext().runOnContext(v -> new RankFanOut(vertx.eventBus(), pool, SEND_TIMEOUT_MS)
                .probeSilentRanks(vertx, AFTER_MS, PROBE_TIMEOUT_MS).toAll(new StatsRequest()).onComplete(replies));
        return replies.future().await(10, TimeUnit.SECONDS).getFirst();
    }

    private static long timed(Supplier<RankReply> send, RankReply[] reply) {
        long began = System.nanoTime();
        reply[0] = send.get();
        return (System.nanoTime() - began) / 1_000_000;
    }

    private static Supplier<RankReply> stats(Vertx vertx, String instance) {
        return () -> {
            try {
                return statsOfOneRank(vertx, instance);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
    }

    @Test
    void aRankSilentOnItsProbeToIsNamedTimeoutWithinTheProbesBound(Vertx vertx) throws Exception {
        String address = WorkerProtocol.rankAddress("silent", 0, 0);
        // a process that does not run: neither the rank nor its probe answers
        vertx.eventBus().consumer(address, message -> { }).completion().await();
        vertx.eventBus().consumer(WorkerProtocol.aliveAddress(address), message -> { }).completion().await();
        RankReply[] reply = new RankReply[1];
        long tookMs = timed(stats(vertx, "silent"), reply);
        assertThat(reply[0].code()).isEqualTo(FailureCode.TIMEOUT);
        assertThat(reply[0].failure().message()).contains("pp0/tp0 did not answer stats within", "nor a liveness probe within "
                + PROBE_TIMEOUT_MS + " ms", "its process is not running");
        assertThat(tookMs).as("ms to name the rank").isGreaterThanOrEqualTo(AFTER_MS + PROBE_TIMEOUT_MS).isLessThan(SEND_TIMEOUT_MS);
    }

    @Test
    void aHundredRequestsToASilentRankShareOneProbe(Vertx vertx) throws Exception {
        String address = WorkerProtocol.rankAddress("crowd", 0, 0);
        vertx.eventBus().consumer(address, message -> { }).completion().await();
        AtomicInteger probes = new AtomicInteger();
        vertx.eventBus().consumer(WorkerProtocol.aliveAddress(address), message -> probes.incrementAndGet()).completion().await();
        PoolRanks pool = new PoolRanks("crowd", List.of(0), 1, 0);
        Promise<List<RankReply>> replies = Promise.promise();
        RankFanOut[] fanOut = new RankFanOut[1];
        vertx.getOrCreateContext().runOnContext(v -> {
            fanOut[0] = new RankFanOut(vertx.eventBus(), pool, SEND_TIMEOUT_MS).probeSilentRanks(vertx, AFTER_MS, PROBE_TIMEOUT_MS);
            List<Future<List<RankReply>>> all = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                all.add(fanOut[0].toAll(new StatsRequest()));
            }
            Future.all(all).map(done -> all.stream().map(f -> f.result().getFirst()).toList()).onComplete(replies);
        });
        List<RankReply> answered = replies.future().await(10, TimeUnit.SECONDS);
        assertThat(answered).hasSize(100).allSatisfy(reply -> {
            assertThat(reply.code()).isEqualTo(FailureCode.TIMEOUT);
            assertThat(reply.failure().message()).contains("nor a liveness probe within " + PROBE_TIMEOUT_MS + " ms");
        });
        assertThat(probes.get()).as("probes the silent rank received").isEqualTo(1);
    }

    @Test
    void aRankThatAnswersItsProbeIsLeftToTheSendTimeout(Vertx vertx) throws Exception {
        String address = WorkerProtocol.rankAddress("busy", 0, 0);
        // a rank whose thread is in a long driver call: its process answers the probe
        vertx.eventBus().consumer(address, message -> { }).completion().await();
        vertx.eventBus().consumer(WorkerProtocol.aliveAddress(address), message -> message.reply(new JsonObject().put("rank", "pp0/tp0")))
                .completion().await();
        RankReply[] reply = new RankReply[1];
        long tookMs = timed(stats(vertx, "busy"), reply);
        assertThat(reply[0].code()).isEqualTo(FailureCode.TIMEOUT);
        assertThat(reply[0].failure().message()).contains("did not answer stats within " + SEND_TIMEOUT_MS + " ms")
                .doesNotContain("liveness probe");
        assertThat(tookMs).isGreaterThanOrEqualTo(SEND_TIMEOUT_MS);
    }

    @Test
    void aRankWithNoProbeConsumerIsLeftToTheSendTimeout(Vertx vertx) throws Exception {
        vertx.eventBus().consumer(WorkerProtocol.rankAddress("old", 0, 0), message -> { }).completion().await();
        RankReply[] reply = new RankReply[1];
        long tookMs = timed(stats(vertx, "old"), reply);
        assertThat(reply[0].code()).isEqualTo(FailureCode.TIMEOUT);
        assertThat(reply[0].failure().message()).doesNotContain("liveness probe");
        assertThat(tookMs).isGreaterThanOrEqualTo(SEND_TIMEOUT_MS);
    }

    @Test
    void aProbeNeedsAWaitAndATimeout(Vertx vertx) {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new RankProbe(vertx, vertx.eventBus(), 0, 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("above 0 ms");
    }
}

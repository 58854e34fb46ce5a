package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvpager.Allocation;
import io.kvpager.cache.KvCache;
import io.kvpager.sim.FaultPlan;
import io.kvpager.cli.status.InstanceDirectory;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.kvpager.worker.RankWorker;
import io.vertx.core.eventbus.DeliveryOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code status} while one rank does not answer (its worker paused, or its thread stuck in a driver
 * call) but the coordinator does: the instance is not ready (exit 3) with that rank down and named,
 * not unreachable (exit 4) because the coordinator waited for the rank past the command's timeout.
 */
class StatusOfASilentRankTest {

    private static final String INSTANCE = "silent-rank";

    private Vertx vertx;
    private KvCache cache;

    @AfterEach
    void close() throws Exception {
        if (cache != null) {
            cache.close().await(30, TimeUnit.SECONDS);
        }
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    private CommandLineTest.Run status() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine commandLine = KvPager.commandLine(new KvPager(vertx));
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute("status", "--timeout", "1s");
        return new CommandLineTest.Run(code, out.toString(), err.toString());
    }

    @Test
    void aRankThatDoesNotAnswerShowsAsDownAndTheInstanceAsNotReady() throws Exception {
        vertx = Vertx.vertx();
        // pp0/tp1's first map takes 8 s, and with no reserve the first allocation's map is the first
        JsonArray faults = new JsonArray().add(new JsonObject().put("op", "map").put("rank", "pp0/tp1").put("delayMs", 8_000));
        cache = KvCache.deploy(vertx, SmallCache.options(INSTANCE).setReserveLow(0).setReserveHigh(0).setAdaptiveReserve(false)
                .setSim(SmallCache.options(INSTANCE).getSim().withFaults(FaultPlan.parse(faults).faults()))).await(30, TimeUnit.SECONDS);
        new InstanceDirectory(vertx).register(INSTANCE).await(5, TimeUnit.SECONDS);
        // every rank answers: ready (and the coordinator's stats are warm, as in a node that has served a while)
        CommandLineTest.Run ready = status();
        assertThat(ready.exitCode()).as(ready.err()).isEqualTo(StatusCommand.READY);

        Future<Allocation> stuck = cache.alloc(40);
        // the map has reached pp0/tp1's thread once the rank no longer answers its stats
        await().atMost(Duration.ofSeconds(10)).until(() -> vertx.eventBus().request(RankWorker.address(INSTANCE, 0, 1), new JsonObject(),
                new DeliveryOptions().addHeader("action", "stats").setSendTimeout(200)).transform(ar -> Future.succeededFuture(ar.failed()))
                .await());

        long started = System.nanoTime();
        CommandLineTest.Run run = status();
        long tookMs = (System.nanoTime() - started) / 1_000_000;

        assertThat(run.exitCode()).as("exit code; out: %s; err: %s", run.out(), run.err()).isEqualTo(StatusCommand.NOT_READY);
        assertThat(run.out()).containsPattern(INSTANCE + "\\s+degraded").contains("pp0/tp1 did not answer stats within 500 ms");
        assertThat(tookMs).as("status answered within its timeout and a little").isLessThan(2_000);
        assertThat(stuck.isComplete()).as("the allocation waits for the stuck map").isFalse();
        assertThat(stuck.await(30, TimeUnit.SECONDS).isMiss()).as("served once the map is done").isFalse();
    }
}

package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.cache.KvCache;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonObject;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * No single {@code limit} request can stop a later {@code kvpager limit} from applying: hostile
 * revisions sent straight to the coordinator are refused with 400 and change nothing, the highest
 * one allowed applies, and {@code kvpager limit} without {@code --revision} still applies after it.
 */
class LimitLockTest {

    private static final String INSTANCE = "limit-lock";

    private Vertx vertx;
    private KvCache cache;

    @BeforeEach
    void deploy() throws Exception {
        vertx = Vertx.vertx();
        cache = SmallCache.deploy(vertx, INSTANCE);
    }

    @AfterEach
    void close() throws Exception {
        cache.close().await(30, TimeUnit.SECONDS);
        vertx.close().await(30, TimeUnit.SECONDS);
    }

    @Test
    void aHostileRevisionCannotLockTheLimit() throws Exception {
        long before = cache.stats().await(10, TimeUnit.SECONDS).pool().limitPages();
        for (long hostile : new long[] {Long.MAX_VALUE, (1L << 62) + 1, -1, Long.MIN_VALUE}) {
            Throwable refused = limitRequest(new JsonObject().put("bytes", 0L).put("revision", hostile));
            assertThat(refused).as("revision %d", hostile).isInstanceOf(ReplyException.class).hasMessageContaining("revision");
            assertThat(((ReplyException) refused).failureCode()).isEqualTo(400);
            assertThat(cache.stats().await(10, TimeUnit.SECONDS).pool().limitPages()).as("revision %d", hostile).isEqualTo(before);
        }
        assertThat(limitRequest(new JsonObject().put("bytes", 0L).put("revision", 1L << 62))).isNull();

        CommandLineTest.Run clockRevision = run("limit", INSTANCE, "1GiB", "--revision", String.valueOf(System.currentTimeMillis()));
        assertThat(clockRevision.exitCode()).isEqualTo(1);
        assertThat(clockRevision.out()).startsWith(INSTANCE + ": STALE");

        CommandLineTest.Run next = run("limit", INSTANCE, "1GiB");
        assertThat(next.exitCode()).as(next.err()).isZero();
        assertThat(next.out()).startsWith(INSTANCE + ": APPLIED limit 1.0 GiB per rank").contains("revision " + ((1L << 62) + 1));
        assertThat(run("limit", INSTANCE, "2GiB").out()).contains("APPLIED", "revision " + ((1L << 62) + 2));

        CommandLineTest.Run tooHigh = run("limit", INSTANCE, "1GiB", "--revision", String.valueOf(Long.MAX_VALUE));
        assertThat(tooHigh.exitCode()).isEqualTo(2);
        assertThat(tooHigh.err()).contains("--revision must be 0 to 2^62");
    }

    /** Sends a limit body to the coordinator as any program on the bus could; the failure, or null on success. */
    private Throwable limitRequest(JsonObject body) throws Exception {
        try {
            vertx.eventBus().request("kvpager." + INSTANCE + ".coordinator", body, new DeliveryOptions().addHeader("action", "limit"))
                    .await(10, TimeUnit.SECONDS);
            return null;
        } catch (ReplyException e) {
            return e;
        }
    }

    private CommandLineTest.Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        picocli.CommandLine commandLine = KvPager.commandLine(new KvPager(vertx));
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        int code = commandLine.execute(args);
        return new CommandLineTest.Run(code, out.toString(), err.toString());
    }
}

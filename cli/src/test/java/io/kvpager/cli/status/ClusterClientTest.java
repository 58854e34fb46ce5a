package io.kvpager.cli.status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A paused node (its kernel accepts the connection, nothing ever answers) holds no command up for
 * longer than the timeout: the nodes are asked at once and the first answer is taken.
 */
class ClusterClientTest {

    private ServerSocket paused;
    private ServerSocket pausedToo;
    private HttpServer answering;
    private final AtomicReference<String> query = new AtomicReference<>();

    @BeforeEach
    void nodes() throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        // bound and listening but never accepting: a connection completes in the backlog, a read waits forever
        paused = new ServerSocket(0, 50, loopback);
        pausedToo = new ServerSocket(0, 50, loopback);
        answering = HttpServer.create(new InetSocketAddress(loopback, 0), 0);
        answering.createContext("/cluster/status", exchange -> {
            query.set(exchange.getRequestURI().getQuery());
            byte[] body = "{\"cluster\":\"c\",\"instances\":[{\"instance\":\"llama\",\"failure\":\"the coordinator of llama did not answer within 700 ms\"}],\"uncoordinated\":[]}"
                    .getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        answering.start();
    }

    @AfterEach
    void close() throws IOException {
        paused.close();
        pausedToo.close();
        answering.stop(0);
    }

    private static URI at(int port) {
        return URI.create("http://127.0.0.1:" + port);
    }

    @Test
    void statusAnswersFromTheNodeThatCanWhilePausedNodesAreAskedAtOnce() throws IOException {
        ClusterClient client = new ClusterClient(List.of(at(paused.getLocalPort()), at(pausedToo.getLocalPort()),
                at(answering.getAddress().getPort())), "c", Duration.ofSeconds(1));
        long start = System.nanoTime();
        List<InstanceStatus> status = client.status(List.of());
        long tookMs = (System.nanoTime() - start) / 1_000_000;
        assertThat(status).singleElement().satisfies(s -> {
            assertThat(s.instance()).isEqualTo("llama");
            assertThat(s.stats()).isNull();
        });
        // in turn, the two paused nodes alone would take 2 s
        assertThat(tookMs).isLessThan(900);
        assertThat(query.get()).contains("wait=700");
    }

    @Test
    void onlyPausedNodesFailWithinTheTimeoutNamingEach() {
        ClusterClient client = new ClusterClient(List.of(at(paused.getLocalPort()), at(pausedToo.getLocalPort())), "c",
                Duration.ofMillis(500));
        long start = System.nanoTime();
        assertThatThrownBy(() -> client.status(List.of())).isInstanceOf(ClusterClient.Unreachable.class)
                .hasMessageContaining("no node of cluster 'c' answered within 500 ms")
                .hasMessageContaining("127.0.0.1:" + paused.getLocalPort())
                .hasMessageContaining("127.0.0.1:" + pausedToo.getLocalPort());
        assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(1_500);
    }

    @Test
    void aTimeoutTooShortToAskIsRefused() {
        assertThatThrownBy(() -> new ClusterClient(List.of(at(1)), "c", Duration.ofMillis(5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("10 ms or more");
    }
}

package io.kvpager.harness.gpu;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The torch peer's protocol against small shell peers: rounds, echoed lines, a peer that dies or never starts. */
class TorchPeerTest {

    @TempDir
    Path dir;

    private List<String> peer(String body) throws IOException {
        Path script = dir.resolve("peer.sh");
        Files.writeString(script, body);
        return List.of("sh", script.toString());
    }

    @Test
    void eachRoundIsOneTimePerShapeAndTheRoundsAddUp() throws IOException {
        List<String> command = peer("""
                echo "torch fake on nothing"
                echo ready
                n=0
                while read request; do
                  [ "$request" = quit ] && exit 0
                  n=$((n + 1))
                  echo "time 64x4096 24$n.5"
                  echo "time 16x16384 250.0"
                  echo done
                done
                """);
        Map<String, List<Double>> all = new HashMap<>();
        try (TorchPeer peer = TorchPeer.start(command)) {
            assertThat(peer.failure()).isEmpty();
            TorchPeer.add(all, peer.round());
            TorchPeer.add(all, peer.round());
            assertThat(peer.failure()).isEmpty();
        }
        assertThat(all).containsOnlyKeys("64x4096", "16x16384");
        assertThat(all.get("64x4096")).containsExactly(241.5, 242.5);
        assertThat(all.get("16x16384")).containsExactly(250.0, 250.0);
    }

    @Test
    void aPeerThatDiesAnswersNoMoreRoundsAndSaysWhy() throws IOException {
        List<String> command = peer("""
                echo ready
                read request
                echo "Traceback: out of memory"
                exit 3
                """);
        try (TorchPeer peer = TorchPeer.start(command)) {
            assertThat(peer.round()).isEmpty();
            assertThat(peer.failure()).hasValueSatisfying(why -> assertThat(why).contains("ended before 'done'").contains("exit 3"));
            assertThat(peer.round()).isEmpty();
        }
    }

    @Test
    void aPeerThatNeverGetsReadyOrCannotStartAnswersNothing() throws IOException {
        try (TorchPeer peer = TorchPeer.start(peer("echo 'no CUDA device for torch'; exit 2\n"))) {
            assertThat(peer.failure()).hasValueSatisfying(why -> assertThat(why).contains("ended before 'ready'"));
            assertThat(peer.round()).isEmpty();
        }
        try (TorchPeer peer = TorchPeer.start(List.of(dir.resolve("no-such-program").toString()))) {
            assertThat(peer.failure()).hasValueSatisfying(why -> assertThat(why).startsWith("cannot start"));
            assertThat(peer.round()).isEmpty();
        }
        try (TorchPeer peer = TorchPeer.none("no script at x.py")) {
            assertThat(peer.failure()).contains("no script at x.py");
        }
    }
}

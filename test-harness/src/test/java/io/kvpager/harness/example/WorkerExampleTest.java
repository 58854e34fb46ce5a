package io.kvpager.harness.example;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The engine guide's worker snippet runs: two workers deployed with the public API serve one cache. */
class WorkerExampleTest {

    @Test
    void workersDeployedWithThePublicApiServeACache() throws Exception {
        assertThat(WorkerExample.run()).containsExactly(
                "pp0/tp0 at kvpager.llama-7b.pp0.tp0 maps 1 pages",
                "pp0/tp1 at kvpager.llama-7b.pp0.tp1 maps 1 pages");
    }
}

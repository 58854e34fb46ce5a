package io.kvpager.harness.example;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The README's embedding snippet runs and exposes kvpager's meters with histogram buckets. */
class EmbeddingExampleTest {

    @Test
    void theReadmeSnippetRunsAndRegistersTheMeters() throws Exception {
        String scrape = EmbeddingExample.run();
        assertThat(scrape)
                .containsPattern("kvpager_alloc_seconds_bucket\\{instance=\"llama-7b\",outcome=\"served\",reason=\"\",le=\"[0-9.E-]+\"} 2")
                .containsPattern("kvpager_rank_calls_seconds_bucket\\{action=\"map\",instance=\"llama-7b\",outcome=\"ok\",rank=\"pp0/tp1\"")
                .contains("kvpager_cache_ready{instance=\"llama-7b\"} 1.0")
                .contains("kvpager_misses_total{instance=\"llama-7b\",reason=\"LIMIT\"} 0.0");
    }
}

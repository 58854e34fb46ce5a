package io.kvpager.harness.gpu;

import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.List;

/**
 * The decode-attention benchmark as a section of the GPU run ({@link AttentionBenchmark}: read
 * floor, kvpager's pages, one buffer and torch, in alternating rounds). Its GPU tests run with the
 * others in the {@code tests} section. torch's row needs {@code python3} with torch and the script
 * at its place in the repository; without them the row says {@code n/a}.
 */
final class AttentionSection implements GpuSection {

    static final Path TORCH_SCRIPT = Path.of("test-harness/src/main/python/attention_torch.py");

    @Override
    public String name() {
        return "attention";
    }

    @Override
    public Report run(Vertx vertx, boolean quick) {
        int rounds = quick ? 3 : 5;
        System.out.println("== decode attention over kvpager's pages");
        List<AttentionBenchmark.Row> rows = AttentionBenchmark.run(vertx, rounds, TORCH_SCRIPT);
        return new Report(AttentionBenchmark.table(rows, rounds), false);
    }
}

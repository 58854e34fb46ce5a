package io.kvpager.harness.fuzz;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a {@link Fuzz} sent and how it was answered.
 *
 * @param seed the generator's seed
 * @param sent messages sent
 * @param byCode answers by failure code ({@code "400"}, {@code "404"}, {@code "409"}, and anything
 *     else that came back: {@code "success"}, {@code "timeout"}, {@code "500"}, ...)
 * @param byTarget messages by receiver
 * @param wrong the first messages answered otherwise than expected, with the answer
 * @param wrongCount all messages answered otherwise than expected
 * @param seconds wall time
 */
public record FuzzReport(long seed, long sent, Map<String, Long> byCode, Map<String, Long> byTarget, List<String> wrong,
                         long wrongCount, double seconds) {

    public FuzzReport {
        byCode = Map.copyOf(byCode);
        byTarget = Map.copyOf(byTarget);
        wrong = List.copyOf(wrong);
    }

    public String describe() {
        return String.format(Locale.ROOT, "fuzz: seed %d, %,d hostile messages in %.1f s (%,.0f/s), answers %s, receivers %s, "
                + "%d answered otherwise than expected", seed, sent, seconds, sent / seconds, new java.util.TreeMap<>(byCode),
                new java.util.TreeMap<>(byTarget), wrongCount);
    }
}

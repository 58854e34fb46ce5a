package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo engine's admission order: the request due soonest first, a new one by its
 * time-to-first-token target, a preempted one by the time-per-output-token target it kept so far.
 */
class AdmissionOrderTest {

    private final AdmissionOrder order = new AdmissionOrder(new ServiceTargets(Duration.ofSeconds(1), Duration.ofMillis(100)));

    private static ServedRequest arrived(int id, long arrivalMs) {
        return new ServedRequest(new TraceRequest(id, 0, arrivalMs, 32, 200));
    }

    /** A request that got its first token at {@code firstTokenMs}, decoded {@code tokens} tokens, then was preempted. */
    private static ServedRequest preempted(int id, long arrivalMs, long firstTokenMs, int tokens) {
        ServedRequest request = arrived(id, arrivalMs);
        request.advance(32, new int[] {0, 1});
        for (int i = 0; i < tokens; i++) {
            request.advance(1, new int[0]);
        }
        request.firstTokenMs = firstTokenMs;
        request.preempt(firstTokenMs + tokens * 30L);
        return request;
    }

    @Test
    void newRequestsGoByArrival() {
        ServedRequest first = arrived(2, 100);
        ServedRequest second = arrived(1, 300);
        ServedRequest sameTime = arrived(3, 300);
        assertThat(order.due(first)).isEqualTo(1_100);
        assertThat(sorted(sameTime, second, first)).containsExactly(first, second, sameTime);
    }

    @Test
    void aPreemptedRequestWithSlackOnItsTimePerTokenWaitsBehindNewerRequestsDueSooner() {
        // first token at 1,000 ms, 40 tokens at 30 ms each: at 100 ms a token it may resume until 5,000 ms
        ServedRequest decodedAhead = preempted(1, 500, 1_000, 40);
        assertThat(order.due(decodedAhead)).isEqualTo(5_000);
        ServedRequest newer = arrived(2, 2_200);
        ServedRequest muchLater = arrived(3, 4_500);
        assertThat(sorted(muchLater, decodedAhead, newer)).containsExactly(newer, decodedAhead, muchLater);
    }

    @Test
    void aPreemptedRequestThatDecodedLittleGoesFirst() {
        ServedRequest barelyStarted = preempted(1, 900, 1_000, 2);
        assertThat(order.due(barelyStarted)).isEqualTo(1_200);
        ServedRequest newer = arrived(2, 1_100);
        assertThat(sorted(newer, barelyStarted)).containsExactly(barelyStarted, newer);
    }

    @Test
    void aRequestPreemptedBeforeItsFirstTokenKeepsItsFirstTokenDue() {
        ServedRequest request = arrived(1, 700);
        request.advance(16, new int[] {0});
        request.preempt(800);
        assertThat(order.due(request)).isEqualTo(1_700);
    }

    private List<ServedRequest> sorted(ServedRequest... requests) {
        List<ServedRequest> list = new ArrayList<>(List.of(requests));
        list.sort(order);
        return list;
    }
}

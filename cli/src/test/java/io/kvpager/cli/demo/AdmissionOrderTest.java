package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The demo engine's admission order: the request due soonest first, a new one by its
 * time-to-first-token target, a preempted one by the time-per-output-token target it kept so far,
 * each less the steps its prefill takes (20 ms steps, 2,048-token chunks here).
 */
class AdmissionOrderTest {

    private static final ServiceTargets TARGETS = new ServiceTargets(Duration.ofSeconds(1), Duration.ofMillis(100));
    private final AdmissionOrder order = new AdmissionOrder(TARGETS, 20, 2048);

    private static ServedRequest arrived(int id, long arrivalMs, int promptTokens) {
        return new ServedRequest(new TraceRequest(id, 0, arrivalMs, promptTokens, 200));
    }

    private static ServedRequest arrived(int id, long arrivalMs) {
        return arrived(id, arrivalMs, 32);
    }

    /** A request that got its first token at {@code firstTokenMs}, decoded {@code tokens} tokens, then was preempted. */
    private static ServedRequest preempted(int id, long arrivalMs, int promptTokens, long firstTokenMs, int tokens) {
        ServedRequest request = arrived(id, arrivalMs, promptTokens);
        request.advance(promptTokens, new int[] {0, 1});
        for (int i = 0; i < tokens; i++) {
            request.advance(1, new int[0]);
        }
        request.firstTokenMs = firstTokenMs;
        request.preempt(firstTokenMs + tokens * 30L);
        return request;
    }

    private static ServedRequest preempted(int id, long arrivalMs, long firstTokenMs, int tokens) {
        return preempted(id, arrivalMs, 32, firstTokenMs, tokens);
    }

    @Test
    void newRequestsGoByArrival() {
        ServedRequest first = arrived(2, 100);
        ServedRequest second = arrived(1, 300);
        ServedRequest sameTime = arrived(3, 300);
        // arrival + 1,000 ms, less one 20 ms prefill step
        assertThat(order.due(first)).isEqualTo(1_080);
        assertThat(sorted(sameTime, second, first)).containsExactly(first, second, sameTime);
    }

    @Test
    void aPreemptedRequestWithSlackOnItsTimePerTokenWaitsBehindNewerRequestsDueSooner() {
        // first token at 1,000 ms, 40 tokens at 30 ms each: 39 tokens' target of 100 ms, less one prefill step
        ServedRequest decodedAhead = preempted(1, 500, 1_000, 40);
        assertThat(order.due(decodedAhead)).isEqualTo(4_880);
        ServedRequest newer = arrived(2, 2_200);
        ServedRequest muchLater = arrived(3, 4_500);
        assertThat(sorted(muchLater, decodedAhead, newer)).containsExactly(newer, decodedAhead, muchLater);
    }

    @Test
    void aPreemptedRequestThatDecodedLittleGoesFirst() {
        ServedRequest barelyStarted = preempted(1, 900, 1_000, 2);
        assertThat(order.due(barelyStarted)).isEqualTo(1_080);
        ServedRequest newer = arrived(2, 1_100);
        assertThat(sorted(newer, barelyStarted)).containsExactly(barelyStarted, newer);
    }

    @Test
    void aRequestPreemptedBeforeItsFirstTokenKeepsItsFirstTokenDue() {
        ServedRequest request = arrived(1, 700);
        request.advance(16, new int[] {0});
        request.preempt(800);
        assertThat(order.due(request)).isEqualTo(1_680);
    }

    @Test
    void aLongerContextIsDueEarlierByTheStepsItsPrefillTakes() {
        // 6,000 prompt tokens: three 2,048-token chunks
        ServedRequest longPrompt = arrived(2, 1_000, 6_000);
        ServedRequest shortPrompt = arrived(1, 1_000, 32);
        assertThat(order.due(longPrompt)).isEqualTo(1_940);
        assertThat(sorted(shortPrompt, longPrompt)).containsExactly(longPrompt, shortPrompt);
        // the same slack on the time per token: the one with more KV to compute again goes first
        ServedRequest longContext = preempted(3, 0, 6_000, 500, 10);
        ServedRequest shortContext = preempted(4, 0, 32, 500, 10);
        assertThat(order.due(longContext)).isEqualTo(500 + 9 * 100 - 3 * 20);
        assertThat(sorted(shortContext, longContext)).containsExactly(longContext, shortContext);
    }

    @Test
    void aStepOrChunkBelowOneIsRefused() {
        assertThatThrownBy(() -> new AdmissionOrder(TARGETS, 0, 2048)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 ms");
        assertThatThrownBy(() -> new AdmissionOrder(TARGETS, 20, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("0 tokens");
    }

    private List<ServedRequest> sorted(ServedRequest... requests) {
        List<ServedRequest> list = new ArrayList<>(List.of(requests));
        list.sort(order);
        return list;
    }
}

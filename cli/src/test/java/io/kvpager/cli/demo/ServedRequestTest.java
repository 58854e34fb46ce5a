package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ServedRequestTest {

    private static final int BLOCK_TOKENS = 16;

    @Test
    void prefillsInChunksThenDecodesABlockEverySixteenTokens() {
        ServedRequest request = new ServedRequest(new TraceRequest(1, 0, 0, 40, 20));
        assertThat(request.tokensThisStep(32)).isEqualTo(32);
        assertThat(request.blocksNeeded(32, BLOCK_TOKENS)).isEqualTo(2);
        request.advance(32, new int[] {0, 1});
        assertThat(request.tokensThisStep(32)).isEqualTo(8);
        assertThat(request.blocksNeeded(8, BLOCK_TOKENS)).isEqualTo(1);
        request.advance(8, new int[] {2});
        assertThat(request.prefilling()).isFalse();
        int allocations = 0;
        while (!request.finished()) {
            int blocks = request.blocksNeeded(request.tokensThisStep(32), BLOCK_TOKENS);
            allocations += blocks;
            request.advance(1, new int[blocks]);
        }
        // 40 prompt + 20 output tokens = 60 tokens: 4 blocks, the 4th allocated while decoding.
        assertThat(allocations).isEqualTo(1);
        assertThat(request.blockCount()).isEqualTo(4);
        assertThat(request.generated()).isEqualTo(20);
    }

    @Test
    void preemptionFreesTheBlocksAndKeepsTheOutput() {
        ServedRequest request = new ServedRequest(new TraceRequest(1, 0, 0, 16, 10));
        request.advance(16, new int[] {7});
        request.advance(1, new int[] {8});
        request.advance(1, new int[0]);
        assertThat(request.preempt(500)).containsExactly(7, 8);
        assertThat(request.blockCount()).isZero();
        assertThat(request.retryAtMs()).isEqualTo(500);
        assertThat(request.preemptions()).isEqualTo(1);
        // Recompute: the prompt and the two tokens already produced.
        assertThat(request.prefilling()).isTrue();
        assertThat(request.contextTokens()).isEqualTo(18);
        assertThat(request.tokensThisStep(64)).isEqualTo(18);
    }

    /** Admission allocates the whole context and the first decoded token's block; prefill then needs no block. */
    @Test
    void admissionReservesTheContextSoThatPrefillAllocatesNothing() {
        ServedRequest request = new ServedRequest(new TraceRequest(1, 0, 0, 40, 20));
        // 40 prompt tokens and the first output token: 41 tokens, 3 blocks of 16
        assertThat(request.blocksToAdmit(BLOCK_TOKENS)).isEqualTo(3);
        request.reserve(new int[] {4, 5, 6});
        assertThat(request.tokensInCache()).isZero();
        assertThat(request.prefilling()).isTrue();
        assertThat(request.blocksNeeded(request.tokensThisStep(32), BLOCK_TOKENS)).isZero();
        request.advance(32, new int[0]);
        assertThat(request.blocksNeeded(request.tokensThisStep(32), BLOCK_TOKENS)).isZero();
        request.advance(8, new int[0]);
        assertThat(request.prefilling()).isFalse();
        assertThat(request.blocksNeeded(1, BLOCK_TOKENS)).isZero();
        assertThat(request.blocks()).containsExactly(4, 5, 6);
        // after a preemption with 9 tokens decoded, it needs its prompt and output again: 40 + 9 + 1 = 50 tokens, 4 blocks
        for (int i = 0; i < 9; i++) {
            request.advance(1, new int[request.blocksNeeded(1, BLOCK_TOKENS)]);
        }
        request.preempt(100);
        assertThat(request.blocksToAdmit(BLOCK_TOKENS)).isEqualTo(4);
    }
}

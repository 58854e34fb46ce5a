package io.kvpager.cli.demo;

import java.util.Arrays;
import java.util.Comparator;

/**
 * A trace request while an engine serves it: the blocks its KV holds, how many tokens of KV they
 * hold, and the output produced so far. Preemption frees the blocks and forgets the KV, but not the
 * output already streamed to the user: on its next turn the request prefills prompt and output
 * again (recompute), then decodes on.
 */
final class ServedRequest {

    /** Earliest arrival first; equal arrivals by the trace's id. */
    static final Comparator<ServedRequest> BY_ARRIVAL = Comparator.comparingLong((ServedRequest r) -> r.trace.arrivalMs())
            .thenComparingInt(r -> r.trace.id());

    final TraceRequest trace;
    private int[] blocks = new int[8];
    private int blockCount;
    private int tokensInCache;
    private int generated;
    private int preemptions;
    private long retryAtMs;
    /** When its first output token was decoded, ms from the start of the run; -1 before. */
    long firstTokenMs = -1;
    /** When it was first admitted (its context allocated), ms from the start of the run; -1 before. */
    long admittedMs = -1;
    /** When it finished, ms from the start of the run; -1 before. */
    long finishedMs = -1;
    /** Admissions of it refused for want of memory. */
    int refusals;
    /** Preemptions that answered a reclaim. */
    int reclaimPreemptions;
    /** Steps in a row its growth was refused, the request sitting them out. */
    int growthRefusedSteps;
    /** Tokens of KV its preemptions threw away that its prefill has not yet computed again. */
    int recomputeOwed;
    /** Its KV's tokens integrated over time (token-seconds) since it last got blocks, sampled by the memory account. */
    double tokenSeconds;

    ServedRequest(TraceRequest trace) {
        this.trace = trace;
        this.retryAtMs = trace.arrivalMs();
    }

    /** Tokens whose KV the request needs before it can decode: its prompt and its output so far. */
    int contextTokens() {
        return trace.promptTokens() + generated;
    }

    boolean prefilling() {
        return tokensInCache < contextTokens();
    }

    boolean finished() {
        return generated >= trace.outputTokens();
    }

    /** Tokens this step adds to the KV: a prefill chunk of at most {@code chunk}, or one decoded token. */
    int tokensThisStep(int chunk) {
        return prefilling() ? Math.min(chunk, contextTokens() - tokensInCache) : 1;
    }

    /** Blocks to allocate before {@code tokens} more tokens fit. */
    int blocksNeeded(int tokens, int blockTokens) {
        int needed = (tokensInCache + tokens + blockTokens - 1) / blockTokens;
        return Math.max(0, needed - blockCount);
    }

    /** Blocks to allocate when the request is admitted: its whole context and the first token it decodes. */
    int blocksToAdmit(int blockTokens) {
        int needed = (contextTokens() + 1 + blockTokens - 1) / blockTokens;
        return Math.max(0, needed - blockCount);
    }

    /** Holds {@code newBlocks} for KV still to be written (the context allocated at admission). */
    void reserve(int[] newBlocks) {
        if (blockCount + newBlocks.length > blocks.length) {
            blocks = Arrays.copyOf(blocks, Math.max(blocks.length * 2, blockCount + newBlocks.length));
        }
        System.arraycopy(newBlocks, 0, blocks, blockCount, newBlocks.length);
        blockCount += newBlocks.length;
    }

    /** The step ran: the tokens' KV is written; a decode step also produced one output token. */
    void advance(int tokens, int[] newBlocks) {
        boolean decoding = !prefilling();
        reserve(newBlocks);
        tokensInCache += tokens;
        if (decoding) {
            generated++;
        }
    }

    /**
     * Gives up the KV: returns the blocks to free; the request waits until {@code retryAtMs}. The
     * tokens its KV held ({@link #tokensInCache} before the call) are computed again on its next turn.
     */
    int[] preempt(long retryAtMs) {
        preemptions++;
        recomputeOwed += tokensInCache;
        growthRefusedSteps = 0;
        this.retryAtMs = retryAtMs;
        return release();
    }

    /** Returns the blocks to free and forgets them. */
    int[] release() {
        int[] held = Arrays.copyOf(blocks, blockCount);
        blockCount = 0;
        tokensInCache = 0;
        return held;
    }

    /** The block holding its latest token; only while it holds blocks. */
    int lastBlock() {
        if (blockCount == 0) {
            throw new IllegalStateException("request " + trace.id() + " holds no block");
        }
        return blocks[blockCount - 1];
    }

    int blockCount() {
        return blockCount;
    }

    /** The blocks holding the request's KV, in token order; a copy. */
    int[] blocks() {
        return Arrays.copyOf(blocks, blockCount);
    }

    /** Tokens whose KV the blocks hold. */
    int tokensInCache() {
        return tokensInCache;
    }

    int generated() {
        return generated;
    }

    int preemptions() {
        return preemptions;
    }

    long retryAtMs() {
        return retryAtMs;
    }
}

package io.kvpager.cli.demo;

import io.kvpager.cache.CacheStats;
import io.kvpager.cache.GpuStats;
import io.kvpager.cache.PoolStats;
import java.util.Arrays;
import java.util.List;

/**
 * Where the caches' memory went over a run: at every sample, each byte of the GPU's budget is put
 * in one of the {@link Use}s, from what the engines hold (tokens written, blocks held) and what the
 * caches and the GPU's broker report ({@code PoolStats}, {@code GpuStats}); integrated over the run
 * as byte-seconds, and apart over the time some model waited for memory (a request refused, or
 * held out of admission by a rule), which is the memory sharing could have given it.
 */
public final class MemoryAccount {

    /** Whether an engine's requests wait for memory at a sample. */
    public enum Wait {
        /** Nothing waits, or what waits does not wait for memory (a preempted request's retry time, a full batch). */
        NONE,
        /** A running request's block or a ready request's admission was refused (or waits for a reclaim's memory). */
        REFUSED,
        /** Ready requests are held out of admission by the engine's rules (after a refusal of growth, during or after a reclaim). */
        HELD
    }

    /**
     * What an engine holds at a sample: tokens of KV written and blocks held by its running
     * requests, its wait, and the token-seconds of KV its preemptions threw away so far (each
     * request's tokens of KV integrated over the samples since it got its blocks, counted when
     * it is preempted).
     */
    public record Engine(long writtenTokens, long blocks, Wait waits, double thrownTokenSeconds) {
    }

    /** What each byte of the budget was doing. */
    public enum Use {
        WRITTEN("KV written"),
        UNWRITTEN("allocated, unwritten"),
        FREE_IN_PAGES("free blocks in used pages"),
        IDLE_PAGES("idle mapped pages"),
        UNMAPPED_HELD("held unmapped"),
        LEASE_SURPLUS("lease surplus"),
        NOBODYS("budget nobody holds");

        final String label;

        Use(String label) {
            this.label = label;
        }
    }

    private final List<ModelProfile> models;
    private final int tp;
    private final double[] byteSeconds = new double[Use.values().length];
    private final double[] waitingByteSeconds = new double[Use.values().length];
    private final double[] refusedSeconds;
    private final double[] heldSeconds;
    private double seconds;
    private double waitingSeconds;
    private double capacityBytes;
    private double lastAt = Double.NaN;
    /** Per model, the token-seconds its preemptions threw away, and bytes per token of its KV, at the latest sample. */
    private final double[] thrownTokenSeconds;
    private final double[] tokenBytes;

    MemoryAccount(List<ModelProfile> models, int tp) {
        this.models = List.copyOf(models);
        this.tp = tp;
        this.refusedSeconds = new double[models.size()];
        this.heldSeconds = new double[models.size()];
        this.thrownTokenSeconds = new double[models.size()];
        this.tokenBytes = new double[models.size()];
    }

    /**
     * One sample at {@code atSeconds}: the engines' state (read when the sample was asked for) and
     * every cache's stats, in the models' order; {@code capacityBytes} is the budget they share.
     * The sample's bytes are counted from the previous sample on.
     */
    void sample(double atSeconds, List<Engine> engines, List<CacheStats> stats, long capacity) {
        if (engines.size() != models.size() || stats.size() != models.size()) {
            throw new IllegalArgumentException("one engine and one cache per model: " + models.size() + " models, " + engines.size()
                    + " engines, " + stats.size() + " caches");
        }
        double dt = Double.isNaN(lastAt) ? 0 : atSeconds - lastAt;
        if (dt < 0) {
            throw new IllegalArgumentException("samples must come in time order: " + atSeconds + " after " + lastAt);
        }
        lastAt = atSeconds;
        capacityBytes = capacity;
        double[] bytes = new double[Use.values().length];
        long taken = -1;
        boolean anyWaits = false;
        for (int m = 0; m < models.size(); m++) {
            Engine engine = engines.get(m);
            CacheStats s = stats.get(m);
            PoolStats pool = s.pool();
            int ranks = s.ranks().size();
            int blocksPerPage = models.get(m).geometry(tp, 1).blocksPerPage();
            double blockBytes = (double) pool.bytesPerPage() * ranks / blocksPerPage;
            double written = engine.writtenTokens() * blockBytes / models.get(m).blockTokens();
            thrownTokenSeconds[m] = engine.thrownTokenSeconds();
            tokenBytes[m] = blockBytes / models.get(m).blockTokens();
            bytes[Use.WRITTEN.ordinal()] += written;
            bytes[Use.UNWRITTEN.ordinal()] += Math.max(0, engine.blocks() * blockBytes - written);
            bytes[Use.FREE_IN_PAGES.ordinal()] += Math.max(0, (long) pool.inUsePages() * blocksPerPage - pool.usedBlocks()) * blockBytes;
            long idlePages = (long) pool.reservePages() + pool.reclaimedPages() + pool.quarantinedPages();
            bytes[Use.IDLE_PAGES.ordinal()] += (double) idlePages * pool.bytesPerPage() * ranks;
            double mapped = (double) pool.mappedPages() * pool.bytesPerPage() * ranks;
            for (GpuStats gpu : s.gpus()) {
                taken = Math.max(taken, gpu.takenBytes());
                bytes[Use.UNMAPPED_HELD.ordinal()] += Math.max(0, gpu.heldBytes() - mapped / s.gpus().size());
                bytes[Use.LEASE_SURPLUS.ordinal()] += Math.max(0, gpu.leasedBytes() - gpu.heldBytes());
            }
            if (s.gpus().isEmpty()) {
                taken = Math.max(0, taken) + (long) mapped;
            }
            switch (engine.waits()) {
                case REFUSED -> refusedSeconds[m] += dt;
                case HELD -> heldSeconds[m] += dt;
                case NONE -> { }
            }
            anyWaits |= engine.waits() != Wait.NONE;
        }
        bytes[Use.NOBODYS.ordinal()] = Math.max(0, capacity - Math.max(0, taken));
        seconds += dt;
        for (int u = 0; u < bytes.length; u++) {
            byteSeconds[u] += bytes[u] * dt;
        }
        if (anyWaits) {
            waitingSeconds += dt;
            for (int u = 0; u < bytes.length; u++) {
                waitingByteSeconds[u] += bytes[u] * dt;
            }
        }
    }

    /** The account so far. */
    Totals totals() {
        double thrown = 0;
        for (int m = 0; m < models.size(); m++) {
            thrown += thrownTokenSeconds[m] * tokenBytes[m];
        }
        return new Totals(capacityBytes, seconds, byteSeconds.clone(), waitingSeconds, waitingByteSeconds.clone(), refusedSeconds.clone(),
                heldSeconds.clone(), thrown);
    }

    /**
     * A run's memory account.
     *
     * @param capacityBytes the budget the caches share
     * @param seconds the time sampled
     * @param byteSeconds per {@link Use}, its bytes integrated over the run
     * @param waitingSeconds the time some model waited for memory
     * @param waitingByteSeconds per {@link Use}, its bytes integrated over that time
     * @param refusedSeconds per model, the time it waited refused
     * @param heldSeconds per model, the time it held ready requests out of admission by a rule
     * @param thrownByteSeconds of the KV written, the byte-seconds that preemptions later threw away
     */
    public record Totals(double capacityBytes, double seconds, double[] byteSeconds, double waitingSeconds, double[] waitingByteSeconds,
            double[] refusedSeconds, double[] heldSeconds, double thrownByteSeconds) {

        public Totals {
            byteSeconds = byteSeconds.clone();
            waitingByteSeconds = waitingByteSeconds.clone();
            refusedSeconds = refusedSeconds.clone();
            heldSeconds = heldSeconds.clone();
        }

        /** {@code use}'s share of the budget over the run (its byte-seconds over the budget's); NaN before a sample. */
        double share(Use use) {
            return seconds == 0 || capacityBytes == 0 ? Double.NaN : byteSeconds[use.ordinal()] / (capacityBytes * seconds);
        }

        /** {@code use}'s share of the budget over the time some model waited; NaN when none did. */
        double waitingShare(Use use) {
            return waitingSeconds == 0 || capacityBytes == 0 ? Double.NaN : waitingByteSeconds[use.ordinal()] / (capacityBytes * waitingSeconds);
        }

        /** The share of the budget over the run held by KV that preemptions later threw away; NaN before a sample. */
        double thrownShare() {
            return seconds == 0 || capacityBytes == 0 ? Double.NaN : thrownByteSeconds / (capacityBytes * seconds);
        }

        double gibSeconds(Use use) {
            return byteSeconds[use.ordinal()] / (1L << 30);
        }

        double waitingGibSeconds(Use use) {
            return waitingByteSeconds[use.ordinal()] / (1L << 30);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Totals t && capacityBytes == t.capacityBytes && seconds == t.seconds && waitingSeconds == t.waitingSeconds
                    && thrownByteSeconds == t.thrownByteSeconds
                    && Arrays.equals(byteSeconds, t.byteSeconds) && Arrays.equals(waitingByteSeconds, t.waitingByteSeconds)
                    && Arrays.equals(refusedSeconds, t.refusedSeconds) && Arrays.equals(heldSeconds, t.heldSeconds);
        }

        @Override
        public int hashCode() {
            return Arrays.hashCode(byteSeconds) * 31 + Double.hashCode(seconds);
        }

        @Override
        public String toString() {
            return "Totals" + Arrays.toString(byteSeconds) + " over " + seconds + " s";
        }
    }
}

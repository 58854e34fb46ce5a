package io.kvpager.harness.soak;

import io.kvpager.MissReason;

import java.util.Locale;
import java.util.Map;

/**
 * What a {@link Soak} did and saw. Every figure was checked while it ran; a report exists only for
 * a soak that passed.
 *
 * @param seed the seed it ran with
 * @param ops allocations and frees made
 * @param allocs allocations that handed out blocks
 * @param misses allocations that missed, by reason
 * @param frees frees made
 * @param fences batch fences opened and retired
 * @param trims trims made; {@code failedTrims} of them failed on a rank
 * @param faultsArmed random driver faults armed
 * @param faultsFired those that fired before the next check cleared the plans
 * @param checks checks of the ledger against the devices
 * @param maps page ids mapped on every rank, in total
 * @param unmaps page ids unmapped, in total
 * @param quarantined pages quarantined at the end
 * @param heapStartBytes heap in use after GC once warmed up
 * @param heapEndBytes heap in use after GC at the end
 * @param seconds wall time of the run
 */
public record SoakReport(long seed, long ops, long allocs, Map<MissReason, Long> misses, long frees, long fences, long trims,
                         long failedTrims, long faultsArmed, long faultsFired, long checks, long maps, long unmaps,
                         int quarantined, long heapStartBytes, long heapEndBytes, double seconds) {

    public SoakReport {
        misses = Map.copyOf(misses);
    }

    public long missCount() {
        return misses.values().stream().mapToLong(Long::longValue).sum();
    }

    /** The figures as a few lines of text. */
    public String describe() {
        return String.format(Locale.ROOT, "soak: seed %d, %,d operations in %.1f s (%,.0f/s): %,d allocations, %,d misses %s, "
                        + "%,d frees, %,d fences, %,d trims (%,d failed)%n"
                        + "  %,d faults armed, %,d fired; %,d pages mapped and %,d unmapped on every rank; %d quarantined at the end%n"
                        + "  %d checks of ledger against devices, all agreed; heap after GC %.1f MiB at start, %.1f MiB at the end",
                seed, ops, seconds, ops / seconds, allocs, missCount(), misses, frees, fences, trims, failedTrims,
                faultsArmed, faultsFired, maps, unmaps, quarantined, checks, heapStartBytes / 1048576.0, heapEndBytes / 1048576.0);
    }
}

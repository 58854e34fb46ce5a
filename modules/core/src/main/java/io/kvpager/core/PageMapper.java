package io.kvpager.core;

import java.util.concurrent.CompletionStage;

/**
 * "Map these page ids on every rank" and "unmap these", whatever carries it out: a local
 * {@link io.kvpager.spi.Device} in tests and benchmarks, the coordinator's event-bus fan-out in a
 * cache. Each call is all-or-nothing: on failure no page of the batch is left mapped anywhere,
 * except those a {@link PageMapFailure} names as quarantined.
 *
 * <p>Stages must complete on the thread that owns the {@link PageLedger} using this mapper.
 */
public interface PageMapper {

    /** Maps every page id in {@code pages}; fails with a {@link PageMapFailure} (or any error). */
    CompletionStage<Void> map(int[] pages);

    /** Unmaps every page id in {@code pages}; fails with a {@link PageMapFailure} (or any error). */
    CompletionStage<Void> unmap(int[] pages);
}

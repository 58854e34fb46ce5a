/**
 * The scheduler side of a KV pool, with no Vert.x in it: the {@link io.kvpager.core.PageLedger}
 * hands out KV blocks over pages, keeps a reserve of mapped idle pages between its
 * {@link io.kvpager.core.ReserveMarks}, holds pages back from unmapping until the batch fences
 * that may read them retire, and enforces a revisioned memory limit. It drives a
 * {@link io.kvpager.core.PageMapper}: the coordinator's event-bus fan-out in a cache, a
 * {@link io.kvpager.core.LocalPageMapper} on one {@link io.kvpager.spi.Device} in tests and
 * benchmarks.
 *
 * <p>Everything here is single-threaded: one owner thread calls the ledger and completes its
 * mapper's stages.
 */
package io.kvpager.core;

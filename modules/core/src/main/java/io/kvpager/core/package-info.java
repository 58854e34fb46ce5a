/**
 * The scheduler side of a KV pool, with no Vert.x in it: the {@link io.kvpager.core.PageLedger}
 * hands out KV blocks over pages, keeps a reserve of mapped idle pages between its
 * {@link io.kvpager.core.ReserveMarks}, holds pages back from unmapping until the batch fences
 * that may read them retire, and enforces a revisioned memory limit. It drives a
 * {@link io.kvpager.core.PageMapper}: the coordinator's event-bus fan-out to the rank workers in
 * a cache, or one {@link io.kvpager.spi.Device} in the calling thread (the device side's
 * {@code LocalPageMapper}) in tests, benchmarks and single-GPU use. Both end in the same
 * device-side code, {@code io.kvpager.device}, which builds on this package and never the other
 * way round: on each rank's thread behind the fan-out, in the calling thread behind the local
 * mapper.
 *
 * <p>Everything here is single-threaded: one owner thread calls the ledger and completes its
 * mapper's stages.
 */
package io.kvpager.core;

/**
 * The device side of a KV pool, with no Vert.x in it: one group's tensors on one
 * {@link io.kvpager.spi.Device} ({@link io.kvpager.device.GroupTensors}), which maps and unmaps
 * page ids all or nothing, undoing a failed batch step by step and reporting what it could not
 * undo in a {@link io.kvpager.device.RankException}; and the idle handles that the groups of one
 * device share ({@link io.kvpager.device.RankHandlePool}, one
 * {@link io.kvpager.device.HandlePool} a handle size, bounded by each group's
 * {@link io.kvpager.device.HandlePoolOptions}). A rank worker runs this code for every request
 * on its GPU; {@link io.kvpager.device.LocalPageMapper} runs it in the calling thread for a
 * {@link io.kvpager.core.PageLedger} on one device.
 *
 * <p>Everything here is confined to the one thread that owns the device.
 */
package io.kvpager.device;

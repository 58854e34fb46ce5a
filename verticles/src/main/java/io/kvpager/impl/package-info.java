/**
 * The device side of one rank: a group's tensors on one device ({@link io.kvpager.impl.GroupTensors}:
 * the virtual ranges of its layers and buffers, the physical handle of each page, the zero page),
 * the rank's pool of idle handles that its groups share ({@link io.kvpager.impl.RankHandlePool}),
 * and the undo log that rolls a failed map or unmap back so that it maps all its pages or none
 * ({@link io.kvpager.impl.UndoLog}). A failure here is a {@link io.kvpager.impl.RankFailure} with
 * its code. Runs on the rank's own worker thread: {@link io.kvpager.impl.worker.RankWorkerVerticle}
 * makes every call; nothing here is thread-safe or knows Vert.x's event bus.
 */
package io.kvpager.impl;

/**
 * The insides of kvpager's verticles. {@link io.kvpager.impl.worker.RankWorkerVerticle} owns one GPU
 * rank: it runs on a worker pool of one thread, holds the {@link io.kvpager.spi.Device}, the
 * virtual ranges and the physical handles of every group's tensors, with a pool of idle handles
 * that its groups share ({@link io.kvpager.impl.RankHandlePool}), and answers the worker
 * event-bus actions ({@link io.kvpager.impl.protocol.WorkerAction}) with a reply or a coded failure.
 * Deploy it with {@link io.kvpager.impl.worker.RankWorkers#deploy}.
 */
package io.kvpager.impl;

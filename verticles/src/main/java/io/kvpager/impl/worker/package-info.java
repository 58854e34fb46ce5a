/**
 * The rank worker: {@link io.kvpager.impl.worker.RankWorkerVerticle} owns one GPU rank and answers
 * the worker actions ({@link io.kvpager.protocol.WorkerAction}) at its event-bus address with
 * a reply or a coded failure, keeps each group's owner lease ({@link io.kvpager.impl.worker.GroupOwners})
 * and answers a repeated request once ({@link io.kvpager.impl.worker.AnswerCache}). The device
 * work itself is the Vert.x-free code of {@link io.kvpager.device}: a
 * {@link io.kvpager.device.GroupTensors} per group and one {@link io.kvpager.device.RankHandlePool}
 * per rank; {@link io.kvpager.impl.worker.TensorsJson} and {@link io.kvpager.protocol.TensorView}
 * are their JSON on the bus. Deploy it with the public {@link io.kvpager.worker.RankWorker#deploy};
 * {@link io.kvpager.impl.worker.RankWorkers} pins it to its thread,
 * {@link io.kvpager.impl.worker.WorkerConfig} holds its validated options.
 * Runs on the rank's own worker thread: a worker pool of one thread, named after the rank, that
 * holds the device; the device is never touched from any other thread.
 */
package io.kvpager.impl.worker;

/**
 * The rank worker: {@link io.kvpager.impl.worker.RankWorkerVerticle} owns one GPU rank and answers
 * the worker actions ({@link io.kvpager.impl.protocol.WorkerAction}) at its event-bus address with
 * a reply or a coded failure, keeps each group's owner lease ({@link io.kvpager.impl.worker.GroupOwners})
 * and answers a repeated request once ({@link io.kvpager.impl.worker.AnswerCache}). Deploy it with
 * {@link io.kvpager.impl.worker.RankWorkers#deploy} and a {@link io.kvpager.impl.worker.WorkerConfig}.
 * Runs on the rank's own worker thread: a worker pool of one thread, named after the rank, that
 * holds the device; the device is never touched from any other thread.
 */
package io.kvpager.impl.worker;

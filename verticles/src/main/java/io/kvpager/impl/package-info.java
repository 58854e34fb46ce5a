/**
 * The insides of kvpager's verticles. {@link io.kvpager.impl.RankWorkerVerticle} owns one GPU
 * rank: it runs on a worker pool of one thread, holds the {@link io.kvpager.spi.Device} and every
 * group's tensors ({@link io.kvpager.device.GroupTensors}, with a pool of idle handles that its
 * groups share, {@link io.kvpager.device.RankHandlePool}: the device-side code of
 * {@link io.kvpager.device}, which has no Vert.x in it), and answers the worker event-bus actions
 * ({@link io.kvpager.impl.WorkerAction}) with a reply or a coded failure. Deploy it with
 * {@link io.kvpager.impl.RankWorkers#deploy}.
 */
package io.kvpager.impl;

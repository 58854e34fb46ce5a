/**
 * A simulated GPU behind the {@link io.kvpager.spi.Device} SPI: the CUDA virtual memory API's
 * rules (granularity, whole-handle maps, no overlaps, deferred release, capacity), memory that
 * really holds bytes, an optional H200 latency model and a fault plan that makes chosen driver
 * calls fail, stall or hang.
 *
 * <p>{@link io.kvpager.sim.SimGpu} is one physical GPU; {@link io.kvpager.sim.SimDevice} is one
 * rank's view of it. {@link io.kvpager.sim.SimGpus} is the process-wide registry that lets several
 * devices opened with the same GPU index share one GPU, the way several models share one H200.
 * {@link io.kvpager.sim.SimDeviceFactory} is the {@code sim} kind of
 * {@link io.kvpager.spi.DeviceFactory}.
 */
package io.kvpager.sim;

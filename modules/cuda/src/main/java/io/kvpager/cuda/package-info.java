/**
 * kvpager's {@link io.kvpager.spi.Device} on the CUDA driver, called through
 * {@code java.lang.foreign}: {@link io.kvpager.cuda.CudaDeviceFactory} (kind {@code cuda}) opens
 * one GPU's primary context, and every driver status becomes a
 * {@link io.kvpager.spi.DeviceException} carrying the driver's own error name.
 *
 * <p>Only {@code CudaDriver} touches {@code libcuda.so.1}, and only once something asks for a
 * CUDA device: on a machine without one the factory reports why instead of failing to load.
 */
package io.kvpager.cuda;

/**
 * The plug point between kvpager and a GPU: {@link io.kvpager.spi.Device} mirrors the CUDA
 * virtual memory API. {@code kvpager-cuda} implements it on the driver, {@code kvpager-sim} in
 * host memory with the driver's rules.
 */
package io.kvpager.spi;

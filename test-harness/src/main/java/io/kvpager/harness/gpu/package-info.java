/**
 * The GPU runner ({@link io.kvpager.harness.gpu.GpuRunner}): the GPU test suite and the GPU
 * benchmarks, each a {@link io.kvpager.harness.gpu.GpuSection}, run in one call on a machine with
 * a CUDA GPU. Benchmarks measure kvpager beside its floors in alternating rounds and report the
 * median and spread of each.
 */
package io.kvpager.harness.gpu;

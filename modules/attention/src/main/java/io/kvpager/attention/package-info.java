/**
 * Paged decode attention over kvpager's blocks on a CUDA GPU: {@code softmax(q·Kᵀ/√D)·V} for one
 * new token of every sequence in a batch, reading K and V through each sequence's block table
 * exactly where kvpager maps them ({@link io.kvpager.attention.KvTensors}).
 *
 * <p>Planning and validation ({@link io.kvpager.attention.AttentionShape},
 * {@link io.kvpager.attention.DecodeBatch}, {@link io.kvpager.attention.StreamPlan},
 * {@link io.kvpager.attention.SplitPlan}) are plain Java
 * and run anywhere. The kernel's CUDA C source ({@code paged_decode.cu}) is compiled on the machine
 * that runs it by NVRTC, called through {@code java.lang.foreign} ({@link io.kvpager.attention.Nvrtc});
 * JCuda loads the compiled module and launches it on the caller's stream
 * ({@link io.kvpager.attention.PagedDecodeAttention}).
 */
package io.kvpager.attention;

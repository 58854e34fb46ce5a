package io.kvpager;

/** How one KV pool's tensors are laid out in virtual memory. */
public enum Layout {
    /**
     * One tensor per (layer, buffer); a page id maps {@code layers × kvBuffers} handles of
     * {@code pageBytes}. For engines whose kernels need a dense tensor per layer.
     */
    PER_LAYER,
    /**
     * One tensor; a page id is one handle of {@code pageBytes × layers × kvBuffers} with blocks
     * interleaved across layers. One driver handle per page id: 25–35× cheaper to map.
     */
    PAGE_MAJOR
}

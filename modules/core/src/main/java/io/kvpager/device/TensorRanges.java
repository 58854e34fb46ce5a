package io.kvpager.device;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.spi.Device;

/**
 * The virtual address ranges of one group's tensors, reserved once when the tensors are created:
 * one range of {@code pages × bytesPerPageId} for {@code PAGE_MAJOR}, or {@code layers × kvBuffers}
 * ranges of {@code pages × pageBytes} for {@code PER_LAYER}. Knows where each page's slots are.
 */
final class TensorRanges {

    private final Geometry geometry;
    private final long[] bases;
    private final boolean[] freed;

    private TensorRanges(Geometry geometry, long[] bases) {
        this.geometry = geometry;
        this.bases = bases;
        this.freed = new boolean[bases.length];
    }

    /**
     * Reserves the ranges {@code geometry} needs, aligned to the device granularity, recording in
     * {@code undo} how to free each one.
     */
    static TensorRanges reserve(Device device, Geometry geometry, UndoLog undo) {
        int count = geometry.layout() == Layout.PAGE_MAJOR ? 1 : geometry.tensors();
        long[] bases = new long[count];
        long size = geometry.rangeBytes();
        for (int i = 0; i < count; i++) {
            long base = device.reserve(size, device.granularity());
            bases[i] = base;
            undo.push("free virtual range " + Long.toHexString(base), () -> device.free(base, size));
        }
        return new TensorRanges(geometry, bases);
    }

    /** Handle slots per page id: 1 for {@code PAGE_MAJOR}, one per tensor for {@code PER_LAYER}. */
    int slots() {
        return geometry.handlesPerPageId();
    }

    /** Bytes of one slot: one handle's size. */
    long slotBytes() {
        return geometry.handleBytes();
    }

    /** Where slot {@code slot} of page {@code page} is mapped. */
    long slotAddress(int page, int slot) {
        return bases[slot] + page * geometry.handleBytes();
    }

    /** The base address of each reserved range. */
    long[] bases() {
        return bases.clone();
    }

    /** Frees every range not freed yet; a failure leaves the rest for a later call. */
    void free(Device device) {
        long size = geometry.rangeBytes();
        for (int i = 0; i < bases.length; i++) {
            if (!freed[i]) {
                device.free(bases[i], size);
                freed[i] = true;
            }
        }
    }
}

package io.kvpager.cuda;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * {@code CUmemAllocationProp} from {@code cuda.h} (CUDA 12 and 13, 64-bit): what
 * {@code cuMemCreate} and {@code cuMemGetAllocationGranularity} are asked for.
 *
 * <pre>
 * offset  0  CUmemAllocationType type                 (int)
 * offset  4  CUmemAllocationHandleType requestedHandleTypes (int)
 * offset  8  CUmemLocation location {type, id}        (int, int; id shares a union with
 *                                                      CUDA 13's localized {deviceId, domain})
 * offset 16  void *win32HandleMetaData
 * offset 24  allocFlags {compressionType, gpuDirectRDMACapable (uchar), usage (ushort),
 *                        reserved[4] (uchar)}
 * size 32, alignment 8: no implicit padding anywhere.
 * </pre>
 */
final class AllocationProp {

    /** {@code CU_MEM_ALLOCATION_TYPE_PINNED}: ordinary device memory. */
    static final int TYPE_PINNED = 1;
    /** {@code CU_MEM_HANDLE_TYPE_NONE}: the handle is never exported to another process. */
    static final int HANDLE_TYPE_NONE = 0;
    /** {@code CU_MEM_LOCATION_TYPE_DEVICE}. */
    static final int LOCATION_DEVICE = 1;

    /** {@code CUmemLocation}, shared with {@link AccessDesc}. */
    static final StructLayout LOCATION = MemoryLayout.structLayout(
            JAVA_INT.withName("type"),
            JAVA_INT.withName("id")).withName("CUmemLocation");

    static final StructLayout ALLOC_FLAGS = MemoryLayout.structLayout(
            JAVA_BYTE.withName("compressionType"),
            JAVA_BYTE.withName("gpuDirectRDMACapable"),
            JAVA_SHORT.withName("usage"),
            MemoryLayout.sequenceLayout(4, JAVA_BYTE).withName("reserved")).withName("allocFlags");

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            JAVA_INT.withName("type"),
            JAVA_INT.withName("requestedHandleTypes"),
            LOCATION.withName("location"),
            ADDRESS.withName("win32HandleMetaData"),
            ALLOC_FLAGS.withName("allocFlags")).withName("CUmemAllocationProp");

    static final VarHandle TYPE = LAYOUT.varHandle(groupElement("type"));
    static final VarHandle REQUESTED_HANDLE_TYPES = LAYOUT.varHandle(groupElement("requestedHandleTypes"));
    static final VarHandle LOCATION_TYPE = LAYOUT.varHandle(groupElement("location"), groupElement("type"));
    static final VarHandle LOCATION_ID = LAYOUT.varHandle(groupElement("location"), groupElement("id"));
    static final VarHandle WIN32_HANDLE_META_DATA = LAYOUT.varHandle(groupElement("win32HandleMetaData"));
    static final VarHandle COMPRESSION_TYPE = LAYOUT.varHandle(groupElement("allocFlags"), groupElement("compressionType"));
    static final VarHandle GPU_DIRECT_RDMA_CAPABLE = LAYOUT.varHandle(groupElement("allocFlags"), groupElement("gpuDirectRDMACapable"));
    static final VarHandle USAGE = LAYOUT.varHandle(groupElement("allocFlags"), groupElement("usage"));

    private AllocationProp() {
    }

    /**
     * Plain pinned memory on {@code device}, no export handle, no compression, no RDMA: the
     * properties kvpager's pages use. Every other byte is zero, as the driver requires of
     * reserved fields.
     */
    static MemorySegment pinnedOn(Arena arena, int device) {
        MemorySegment prop = arena.allocate(LAYOUT); // zero-filled
        TYPE.set(prop, 0L, TYPE_PINNED);
        REQUESTED_HANDLE_TYPES.set(prop, 0L, HANDLE_TYPE_NONE);
        LOCATION_TYPE.set(prop, 0L, LOCATION_DEVICE);
        LOCATION_ID.set(prop, 0L, device);
        WIN32_HANDLE_META_DATA.set(prop, 0L, MemorySegment.NULL);
        COMPRESSION_TYPE.set(prop, 0L, (byte) 0);
        GPU_DIRECT_RDMA_CAPABLE.set(prop, 0L, (byte) 0);
        USAGE.set(prop, 0L, (short) 0);
        return prop;
    }
}

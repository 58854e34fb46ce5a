package io.kvpager.cuda;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * {@code CUmemAccessDesc} from {@code cuda.h}: which location gets which access to a mapped range,
 * as {@code cuMemSetAccess} takes it.
 *
 * <pre>
 * offset 0  CUmemLocation location {type, id}  (int, int)
 * offset 8  CUmemAccess_flags flags            (int)
 * size 12, alignment 4.
 * </pre>
 */
final class AccessDesc {

    /** {@code CU_MEM_ACCESS_FLAGS_PROT_READWRITE}. */
    static final int PROT_READWRITE = 3;

    static final StructLayout LAYOUT = MemoryLayout.structLayout(
            AllocationProp.LOCATION.withName("location"),
            JAVA_INT.withName("flags")).withName("CUmemAccessDesc");

    static final VarHandle LOCATION_TYPE = LAYOUT.varHandle(groupElement("location"), groupElement("type"));
    static final VarHandle LOCATION_ID = LAYOUT.varHandle(groupElement("location"), groupElement("id"));
    static final VarHandle FLAGS = LAYOUT.varHandle(groupElement("flags"));

    private AccessDesc() {
    }

    /** Read and write access for {@code device} itself. */
    static MemorySegment readWriteOn(Arena arena, int device) {
        MemorySegment desc = arena.allocate(LAYOUT);
        LOCATION_TYPE.set(desc, 0L, AllocationProp.LOCATION_DEVICE);
        LOCATION_ID.set(desc, 0L, device);
        FLAGS.set(desc, 0L, PROT_READWRITE);
        return desc;
    }
}

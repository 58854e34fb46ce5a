package io.kvpager.cuda;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/** The structs must match cuda.h byte for byte: the driver reads them as raw memory. */
class StructLayoutTest {

    @Test
    void allocationPropHasTheHeadersOffsetsAndSize() {
        var l = AllocationProp.LAYOUT;
        assertThat(l.byteSize()).isEqualTo(32);
        assertThat(l.byteAlignment()).isEqualTo(8);
        assertThat(l.byteOffset(groupElement("type"))).isZero();
        assertThat(l.byteOffset(groupElement("requestedHandleTypes"))).isEqualTo(4);
        assertThat(l.byteOffset(groupElement("location"), groupElement("type"))).isEqualTo(8);
        assertThat(l.byteOffset(groupElement("location"), groupElement("id"))).isEqualTo(12);
        assertThat(l.byteOffset(groupElement("win32HandleMetaData"))).isEqualTo(16);
        assertThat(l.byteOffset(groupElement("allocFlags"), groupElement("compressionType"))).isEqualTo(24);
        assertThat(l.byteOffset(groupElement("allocFlags"), groupElement("gpuDirectRDMACapable"))).isEqualTo(25);
        assertThat(l.byteOffset(groupElement("allocFlags"), groupElement("usage"))).isEqualTo(26);
        assertThat(l.byteOffset(groupElement("allocFlags"), groupElement("reserved"))).isEqualTo(28);
    }

    @Test
    void pinnedPropIsPinnedDeviceMemoryWithEverythingElseZero() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment prop = AllocationProp.pinnedOn(arena, 3);
            assertThat(prop.get(JAVA_INT, 0)).isEqualTo(1);  // CU_MEM_ALLOCATION_TYPE_PINNED
            assertThat(prop.get(JAVA_INT, 4)).isZero();      // CU_MEM_HANDLE_TYPE_NONE
            assertThat(prop.get(JAVA_INT, 8)).isEqualTo(1);  // CU_MEM_LOCATION_TYPE_DEVICE
            assertThat(prop.get(JAVA_INT, 12)).isEqualTo(3); // device id
            assertThat(prop.get(JAVA_LONG, 16)).isZero();
            assertThat(prop.get(JAVA_LONG, 24)).isZero();
        }
    }

    @Test
    void accessDescHasTheHeadersOffsetsAndSize() {
        var l = AccessDesc.LAYOUT;
        assertThat(l.byteSize()).isEqualTo(12);
        assertThat(l.byteAlignment()).isEqualTo(4);
        assertThat(l.byteOffset(groupElement("location"), groupElement("type"))).isZero();
        assertThat(l.byteOffset(groupElement("location"), groupElement("id"))).isEqualTo(4);
        assertThat(l.byteOffset(groupElement("flags"))).isEqualTo(8);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment desc = AccessDesc.readWriteOn(arena, 2);
            assertThat(desc.toArray(JAVA_INT)).containsExactly(1, 2, 3); // device, id 2, PROT_READWRITE
            assertThat(desc.byteSize()).isEqualTo(12);
            assertThat(desc.get(JAVA_BYTE, 11)).isZero();
        }
    }
}

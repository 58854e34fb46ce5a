package io.kvpager.attention;

import static jcuda.driver.JCudaDriver.cuPointerGetAttribute;

import java.util.Objects;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUpointer_attribute;

/**
 * A caller's device buffer and its size in bytes: a JCuda {@link CUdeviceptr} does not know its
 * size, and the operation checks that queries and output fit before it launches anything.
 */
public record DeviceBuffer(CUdeviceptr pointer, long bytes) {

    public DeviceBuffer {
        Objects.requireNonNull(pointer, "pointer");
        if (bytes < 0) {
            throw new IllegalArgumentException("bytes must not be negative, got " + bytes);
        }
    }

    /** Throws unless at least {@code needed} bytes: {@code what} names the buffer in the message. */
    void requireAtLeast(long needed, String what) {
        if (bytes < needed) {
            throw new IllegalArgumentException(what + " buffer holds " + bytes + " bytes, " + needed + " are needed");
        }
    }

    /** The device address, asked of the driver ({@code CU_POINTER_ATTRIBUTE_DEVICE_POINTER}). */
    public long address() {
        long[] out = new long[1];
        cuPointerGetAttribute(Pointer.to(out), CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_POINTER, pointer);
        return out[0];
    }
}

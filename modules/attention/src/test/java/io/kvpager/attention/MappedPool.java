package io.kvpager.attention;

import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.spi.Device;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.SplittableRandom;

/**
 * One group's tensors on a real GPU for a test, laid out as a rank worker lays them out: the
 * geometry's ranges reserved, every page id mapped, and a host image of every range that the test
 * fills and writes in one go. Unset bytes are random, so a kernel that reads the wrong layer,
 * buffer or token reads garbage, not zeros.
 */
final class MappedPool implements AutoCloseable {

    final Geometry geometry;
    final KvTensors tensors;
    private final Device device;
    private final long[] bases;
    private final long[] handles;
    private final ByteBuffer[] images;

    MappedPool(Device device, Geometry geometry, SplittableRandom random) {
        this.device = device;
        this.geometry = geometry.requireGranularity(device.granularity());
        int ranges = geometry.layout() == Layout.PAGE_MAJOR ? 1 : geometry.tensors();
        this.bases = new long[ranges];
        this.handles = new long[ranges * geometry.pages()];
        this.images = new ByteBuffer[ranges];
        for (int r = 0; r < ranges; r++) {
            bases[r] = device.reserve(geometry.rangeBytes(), device.granularity());
            for (int p = 0; p < geometry.pages(); p++) {
                long at = bases[r] + p * geometry.handleBytes();
                long handle = device.create(geometry.handleBytes());
                handles[r * geometry.pages() + p] = handle;
                device.map(at, geometry.handleBytes(), handle);
                device.setAccess(at, geometry.handleBytes());
            }
            byte[] bytes = new byte[(int) geometry.rangeBytes()];
            for (int i = 0; i < bytes.length; i += 8) {
                long v = random.nextLong();
                for (int k = 0; k < 8; k++) {
                    bytes[i + k] = (byte) (v >>> (8 * k));
                }
            }
            images[r] = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        this.tensors = KvTensors.of(geometry, bases);
    }

    /** Sets one element of the host image. */
    void set(AttentionShape shape, int layer, int buffer, int block, int token, int head, int dim, short bits) {
        images[range(layer, buffer)].putShort(offset(shape, layer, buffer, block, token, head, dim), bits);
    }

    /** One element of the host image. */
    short get(AttentionShape shape, int layer, int buffer, int block, int token, int head, int dim) {
        return images[range(layer, buffer)].getShort(offset(shape, layer, buffer, block, token, head, dim));
    }

    /** Sets one byte of block {@code block} of (layer, buffer) in the host image, {@code at} bytes into the block. */
    void setByte(int layer, int buffer, int block, long at, byte value) {
        images[range(layer, buffer)].put(blockOffset(layer, buffer, block, at), value);
    }

    /** Sets one fp32 of block {@code block} of (layer, buffer) in the host image, {@code at} bytes into the block. */
    void setFloat(int layer, int buffer, int block, long at, float value) {
        images[range(layer, buffer)].putFloat(blockOffset(layer, buffer, block, at), value);
    }

    /** One byte of the host image, {@code at} bytes into the block. */
    byte getByte(int layer, int buffer, int block, long at) {
        return images[range(layer, buffer)].get(blockOffset(layer, buffer, block, at));
    }

    /** One fp32 of the host image, {@code at} bytes into the block. */
    float getFloat(int layer, int buffer, int block, long at) {
        return images[range(layer, buffer)].getFloat(blockOffset(layer, buffer, block, at));
    }

    /** Copies the device's bytes of every range into the host images (what kernels wrote). */
    void download() {
        device.synchronize();
        for (int r = 0; r < bases.length; r++) {
            byte[] bytes = images[r].array();
            int step = 64 << 20;
            for (int at = 0; at < bytes.length; at += step) {
                byte[] part = device.read(bases[r] + at, Math.min(step, bytes.length - at));
                System.arraycopy(part, 0, bytes, at, part.length);
            }
        }
    }

    /** A copy of every host image, one after the other. */
    byte[] snapshot() {
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        for (ByteBuffer image : images) {
            all.writeBytes(image.array());
        }
        return all.toByteArray();
    }

    private int blockOffset(int layer, int buffer, int block, long at) {
        return (int) (tensors.blockAddress(layer, buffer, block) - bases[range(layer, buffer)] + at);
    }

    /** Copies every host image to the device. */
    void upload() {
        for (int r = 0; r < bases.length; r++) {
            byte[] bytes = images[r].array();
            int step = 64 << 20;
            for (int at = 0; at < bytes.length; at += step) {
                byte[] part = java.util.Arrays.copyOfRange(bytes, at, Math.min(bytes.length, at + step));
                device.write(bases[r] + at, part);
            }
        }
    }

    private int range(int layer, int buffer) {
        return geometry.layout() == Layout.PAGE_MAJOR ? 0 : layer * geometry.kvBuffers() + buffer;
    }

    private int offset(AttentionShape shape, int layer, int buffer, int block, int token, int head, int dim) {
        return (int) (tensors.blockAddress(layer, buffer, block) - bases[range(layer, buffer)]
                + shape.offsetInBlock(token, head, dim));
    }

    @Override
    public void close() {
        device.synchronize();
        for (int r = 0; r < bases.length; r++) {
            for (int p = 0; p < geometry.pages(); p++) {
                device.unmap(bases[r] + p * geometry.handleBytes(), geometry.handleBytes());
                device.release(handles[r * geometry.pages() + p]);
            }
            device.free(bases[r], geometry.rangeBytes());
        }
    }
}

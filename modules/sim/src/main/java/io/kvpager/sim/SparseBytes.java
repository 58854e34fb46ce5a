package io.kvpager.sim;

import java.util.Arrays;

/**
 * The bytes of one physical allocation, held in host memory only where they were written: 64 KiB
 * chunks appear on the first write that touches them, and bytes never written read as zero. A
 * simulated 141 GiB GPU full of KV pages thus costs the host only what a test really wrote.
 *
 * <p>Not thread-safe; its {@link SimDevice} guards it.
 */
final class SparseBytes {

    static final int CHUNK = 64 << 10;

    private final long size;
    private byte[][] chunks;
    private long backingBytes;

    SparseBytes(long size) {
        this.size = size;
    }

    long size() {
        return size;
    }

    /** Host bytes held now. */
    long backingBytes() {
        return backingBytes;
    }

    void write(long offset, byte[] source, int from, int length) {
        check(offset, length);
        while (length > 0) {
            int index = chunkIndex(offset);
            int at = (int) (offset % CHUNK);
            int n = Math.min(length, chunkLength(index) - at);
            System.arraycopy(source, from, chunk(index), at, n);
            offset += n;
            from += n;
            length -= n;
        }
    }

    void read(long offset, byte[] target, int from, int length) {
        check(offset, length);
        while (length > 0) {
            int index = chunkIndex(offset);
            int at = (int) (offset % CHUNK);
            int n = Math.min(length, chunkLength(index) - at);
            byte[] chunk = chunks == null ? null : chunks[index];
            if (chunk == null) {
                Arrays.fill(target, from, from + n, (byte) 0);
            } else {
                System.arraycopy(chunk, at, target, from, n);
            }
            offset += n;
            from += n;
            length -= n;
        }
    }

    void fill(long offset, long length, byte value) {
        check(offset, length);
        while (length > 0) {
            int index = chunkIndex(offset);
            int at = (int) (offset % CHUNK);
            int n = (int) Math.min(length, chunkLength(index) - at);
            if (at == 0 && n == chunkLength(index) && value == 0) {
                drop(index); // a zeroed chunk reads as zero without holding memory
            } else if (value != 0 || (chunks != null && chunks[index] != null)) {
                Arrays.fill(chunk(index), at, at + n, value);
            }
            offset += n;
            length -= n;
        }
    }

    /** Gives the host memory back; the bytes are gone. */
    void discard() {
        chunks = null;
        backingBytes = 0;
    }

    private byte[] chunk(int index) {
        if (chunks == null) {
            chunks = new byte[Math.toIntExact((size + CHUNK - 1) / CHUNK)][];
        }
        byte[] chunk = chunks[index];
        if (chunk == null) {
            chunk = new byte[chunkLength(index)];
            chunks[index] = chunk;
            backingBytes += chunk.length;
        }
        return chunk;
    }

    private void drop(int index) {
        if (chunks != null && chunks[index] != null) {
            backingBytes -= chunks[index].length;
            chunks[index] = null;
        }
    }

    private int chunkLength(int index) {
        return (int) Math.min(CHUNK, size - (long) index * CHUNK);
    }

    private static int chunkIndex(long offset) {
        return Math.toIntExact(offset / CHUNK);
    }

    private void check(long offset, long length) {
        if (offset < 0 || length < 0 || offset > size - length) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + length + ") outside " + size + " bytes");
        }
    }
}

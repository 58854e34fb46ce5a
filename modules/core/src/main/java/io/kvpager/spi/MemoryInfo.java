package io.kvpager.spi;

/** Free and total bytes of one device's memory. */
public record MemoryInfo(long freeBytes, long totalBytes) {
    public MemoryInfo {
        if (freeBytes < 0 || totalBytes < 0 || freeBytes > totalBytes) {
            throw new IllegalArgumentException("free " + freeBytes + " / total " + totalBytes + " bytes is not a memory state");
        }
    }

    public long usedBytes() {
        return totalBytes - freeBytes;
    }
}

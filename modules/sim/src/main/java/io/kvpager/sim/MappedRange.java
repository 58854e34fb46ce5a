package io.kvpager.sim;

/**
 * One live {@code cuMemMap}: {@code size} bytes at {@code address} backed by {@code handle}, and
 * whether {@code cuMemSetAccess} has made it readable and writable.
 */
public record MappedRange(long address, long size, long handle, boolean accessible) {

    public long end() {
        return address + size;
    }

    @Override
    public String toString() {
        return "0x" + Long.toHexString(address) + "+" + size + " -> handle " + handle + (accessible ? "" : " (no access)");
    }
}

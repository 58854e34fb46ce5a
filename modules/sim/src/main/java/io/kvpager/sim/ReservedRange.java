package io.kvpager.sim;

/** One live {@code cuMemAddressReserve}: {@code size} bytes of virtual address space at {@code address}. */
public record ReservedRange(long address, long size) {

    public long end() {
        return address + size;
    }

    public boolean contains(long from, long length) {
        return from >= address && length >= 0 && from - address <= size - length;
    }

    @Override
    public String toString() {
        return "0x" + Long.toHexString(address) + "+" + size;
    }
}

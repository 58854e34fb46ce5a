package io.kvpager.sim;

/**
 * One physical allocation made by {@code cuMemCreate}: its bytes, how many mappings use it, and
 * whether its owner has released it (the memory then goes back at its last unmap).
 *
 * <p>Not thread-safe; its {@link SimDevice} guards it.
 */
final class SimHandle {

    final long id;
    final SparseBytes bytes;
    int mappings;
    boolean released;

    SimHandle(long id, long size) {
        this.id = id;
        this.bytes = new SparseBytes(size);
    }

    long size() {
        return bytes.size();
    }
}

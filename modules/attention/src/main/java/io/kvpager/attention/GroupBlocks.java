package io.kvpager.attention;

import java.util.BitSet;

/**
 * The block ids a group holds now, as its engine learned them from {@code alloc} and gave them
 * back with {@code free}: what a decode batch's block tables may name. Not thread-safe: kept by
 * the engine's scheduler, read when a batch is checked.
 */
public final class GroupBlocks {

    private final int totalBlocks;
    private final BitSet held = new BitSet();

    /** For a pool of {@code totalBlocks} block ids, none held yet. */
    public GroupBlocks(int totalBlocks) {
        if (totalBlocks <= 0) {
            throw new IllegalArgumentException("totalBlocks must be at least 1, got " + totalBlocks);
        }
        this.totalBlocks = totalBlocks;
    }

    /** Records blocks an allocation handed out; all or nothing. */
    public void add(int... blocks) {
        for (int b : blocks) {
            requireInPool(b);
            if (held.get(b)) {
                throw new IllegalArgumentException("block " + b + " is already held by this group");
            }
        }
        for (int b : blocks) {
            held.set(b);
        }
    }

    /** Records blocks given back; all or nothing. */
    public void remove(int... blocks) {
        for (int b : blocks) {
            requireInPool(b);
            if (!held.get(b)) {
                throw new IllegalArgumentException("block " + b + " is not held by this group");
            }
        }
        for (int b : blocks) {
            held.clear(b);
        }
    }

    public boolean holds(int block) {
        return block >= 0 && block < totalBlocks && held.get(block);
    }

    public int size() {
        return held.cardinality();
    }

    public int totalBlocks() {
        return totalBlocks;
    }

    private void requireInPool(int block) {
        if (block < 0 || block >= totalBlocks) {
            throw new IllegalArgumentException("block " + block + " is outside the pool's 0.." + (totalBlocks - 1));
        }
    }
}

package io.kvpager.harness.fuzz;

import io.kvpager.protocol.BusAddress;
import io.kvpager.Geometry;

import java.util.Arrays;
import java.util.BitSet;

/**
 * What a hostile sender is told about the pool it attacks, so that every message it makes is one
 * the pool must refuse: a map names at least one page already mapped, an unmap at least one page
 * not mapped, a free at least one block not allocated, a new group's tensors come with a broken
 * field.
 *
 * @param instance the cache's instance name
 * @param tp the ranks of stage 0
 * @param group the pool's group
 * @param geometry the pool's geometry, as the ranks created its tensors
 * @param mapped the page ids mapped on every rank
 * @param allocated the block ids handed out
 * @param owner the owner of the group's tensors on every rank, as the workers write it: a request
 *     that carries it is judged on its other fields
 */
public record PoolFacts(String instance, int tp, int group, Geometry geometry, int[] mapped, int[] allocated, String owner) {

    public PoolFacts {
        mapped = mapped.clone();
        allocated = allocated.clone();
        Arrays.sort(mapped);
        Arrays.sort(allocated);
        if (mapped.length == 0 || mapped.length == geometry.pages()) {
            throw new IllegalArgumentException("the pool must have some pages mapped and some not, so that a hostile map and "
                    + "unmap can each be made to conflict; mapped: " + mapped.length + " of " + geometry.pages());
        }
        if (allocated.length == 0 || allocated.length == geometry.totalBlocks()) {
            throw new IllegalArgumentException("the pool must have some blocks allocated and some not");
        }
    }

    public String workerAddress(int tp) {
        return BusAddress.rank(instance, 0, tp);
    }

    public String coordinatorAddress() {
        return BusAddress.coordinator(instance);
    }

    BitSet mappedSet() {
        BitSet set = new BitSet(geometry.pages());
        for (int p : mapped) {
            set.set(p);
        }
        return set;
    }

    BitSet allocatedSet() {
        BitSet set = new BitSet(geometry.totalBlocks());
        for (int b : allocated) {
            set.set(b);
        }
        return set;
    }
}

package io.kvpager.protocol;

import io.kvpager.cache.KvCacheOptions;

import java.util.ArrayList;
import java.util.List;

/**
 * The pool a coordinator serves, {@code (instance, stages, group)}, and the ranks its pages live
 * on: every tp rank of every listed stage. The stage list is explicit; there is no "all stages"
 * marker to misread.
 */
public record PoolRanks(String instance, List<Integer> stages, int tp, int group) {

    public PoolRanks {
        stages = List.copyOf(stages);
        if (stages.isEmpty() || tp < 1 || group < 0) {
            throw new IllegalArgumentException("a pool needs stages, tp >= 1 and group >= 0, got stages " + stages
                    + ", tp " + tp + ", group " + group);
        }
    }

    public static PoolRanks of(KvCacheOptions options) {
        return new PoolRanks(options.getInstance(), options.getStages(), options.getTp(), options.getGroup());
    }

    /** Every rank of the pool, stage by stage, tp rank by tp rank. */
    public List<RankTarget> ranks() {
        List<RankTarget> ranks = new ArrayList<>(stages.size() * tp);
        for (int stage : stages) {
            for (int r = 0; r < tp; r++) {
                ranks.add(new RankTarget(stage, r));
            }
        }
        return ranks;
    }

    /** The coordinator's event-bus address: {@code kvpager.<instance>.coordinator}. */
    public String coordinatorAddress() {
        return WorkerProtocol.coordinatorAddress(instance);
    }
}

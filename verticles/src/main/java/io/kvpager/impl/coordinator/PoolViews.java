package io.kvpager.impl.coordinator;

import io.kvpager.protocol.RankTarget;
import io.kvpager.FailureCode;
import io.kvpager.cache.BufferView;
import io.kvpager.cache.KvPagerException;
import io.kvpager.cache.RankFailure;
import io.kvpager.cache.RankViews;
import io.kvpager.protocol.TensorView;
import io.kvpager.protocol.ViewsReply;
import io.kvpager.protocol.ViewsRequest;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;

/**
 * The pool's views on every rank, from each worker's {@code views} answer: all of them, or a
 * {@link KvPagerException} naming every rank that could not answer (down, without tensors, or
 * with a reply that is not a {@code views} reply). Nothing is changed on any rank.
 */
final class PoolViews {

    private PoolViews() {
    }

    /** Asks every rank of {@code fanOut}'s pool; call on the coordinator's context. */
    static Future<List<RankViews>> read(RankFanOut fanOut, long blockBytes) {
        int group = fanOut.pool().group();
        return fanOut.toAll(new ViewsRequest(group)).map(replies -> {
            List<RankViews> views = new ArrayList<>(replies.size());
            List<RankFailure> failures = new ArrayList<>();
            for (RankReply reply : replies) {
                if (!reply.succeeded()) {
                    failures.add(reply.failure());
                    continue;
                }
                try {
                    views.add(of(reply.rank(), ViewsReply.fromJson(reply.body()), blockBytes));
                } catch (IllegalArgumentException e) {
                    failures.add(new RankFailure(reply.rank().name(), FailureCode.DRIVER_ERROR,
                            reply.rank().name() + " answered views with a body that is not a views reply: " + e.getMessage(),
                            group, RankFailure.NONE, null, true, List.of()));
                }
            }
            if (!failures.isEmpty()) {
                throw KvPagerException.ofRanks("views of group " + group, replies.size(), failures);
            }
            return views;
        });
    }

    private static RankViews of(RankTarget rank, ViewsReply reply, long blockBytes) {
        List<BufferView> buffers = new ArrayList<>(reply.views().size());
        for (TensorView v : reply.views()) {
            buffers.add(new BufferView(v.layer(), v.buffer(), v.address(), blockBytes, v.blockStride(), v.blockCount(),
                    v.blocksPerPage(), v.pageStride()));
        }
        return new RankViews(rank.name(), rank.pp(), rank.tp(), buffers);
    }
}

package io.kvpager.cache;

import io.vertx.codegen.annotations.GenIgnore;

import java.util.List;

/**
 * One rank's views of a cache's KV tensors, as {@link KvCache#views()} returns them: one
 * {@link BufferView} per (layer, buffer), layer by layer, buffer by buffer within a layer.
 *
 * @param rank the rank, {@code pp<P>/tp<R>}
 * @param pp its pipeline stage
 * @param tp its tensor-parallel rank
 * @param buffers its views, layer-major
 */
@GenIgnore(GenIgnore.PERMITTED_TYPE)
public record RankViews(String rank, int pp, int tp, List<BufferView> buffers) {

    public RankViews {
        buffers = List.copyOf(buffers);
    }

    /** The view of {@code layer}'s {@code buffer}; one this rank does not hold fails with an {@link IllegalArgumentException}. */
    public BufferView buffer(int layer, int buffer) {
        for (BufferView view : buffers) {
            if (view.layer() == layer && view.buffer() == buffer) {
                return view;
            }
        }
        throw new IllegalArgumentException(rank + " holds no view of layer " + layer + " buffer " + buffer);
    }
}

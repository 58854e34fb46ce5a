package io.kvpager.device;

import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.MissReason;
import io.kvpager.core.PageMapFailure;
import io.kvpager.core.PageMapper;
import io.kvpager.spi.Device;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * Maps a pool's page ids on one {@link Device} in the calling thread, with the code a rank worker
 * runs for each map and unmap request: one group's {@link GroupTensors} and a
 * {@link RankHandlePool} of its own, without the event bus. The mapper of tests, benchmarks and
 * single-GPU use.
 *
 * <p>Each batch is all or nothing, as on a rank. A batch refused before any device call (a page
 * out of range, listed twice, already mapped or not mapped) fails with an
 * {@link IllegalArgumentException}; a driver failure fails with a {@link PageMapFailure} whose
 * cause is the {@link RankException}, after the batch was undone, and names as quarantined the
 * pages the undo could not restore. Stages complete before the call returns. The device must be
 * attached to the calling thread, which must be the one thread that uses it.
 */
public final class LocalPageMapper implements PageMapper, AutoCloseable {

    private final Device device;
    private final RankHandlePool handles;
    private final GroupTensors tensors;
    private final BitSet quarantined = new BitSet();
    private boolean closed;
    private boolean destroyed;

    /** Reserves the pool's tensors on {@code device}, with a rank worker's defaults: no zero page, the default handle pool. */
    public LocalPageMapper(Device device, Geometry geometry) {
        this(device, geometry, false, geometry == null ? null : HandlePoolOptions.defaults(geometry));
    }

    /**
     * Reserves the pool's tensors on {@code device}, as {@code create-tensors} does on a rank.
     *
     * @throws IllegalArgumentException when the geometry does not suit the device, or the pool
     *     options the geometry
     * @throws RankException when the device refuses (nothing is left reserved)
     */
    public LocalPageMapper(Device device, Geometry geometry, boolean zeroPage, HandlePoolOptions poolOptions) {
        if (device == null || geometry == null || poolOptions == null) {
            throw new IllegalArgumentException("a local mapper needs a device, a geometry and handle pool options");
        }
        this.device = device;
        this.handles = new RankHandlePool(device);
        this.tensors = GroupTensors.create(device, handles, 0, geometry, zeroPage, poolOptions);
    }

    /** The tensors this mapper maps into: where each page lies, what is mapped, what they hold. */
    public GroupTensors tensors() {
        return tensors;
    }

    /** The idle handles kept between an unmap and the next map. */
    public RankHandlePool handles() {
        return handles;
    }

    /** Pages a failed batch could not restore; the ledger quarantines them. */
    public int[] quarantinedPages() {
        return quarantined.stream().toArray();
    }

    @Override
    public CompletionStage<Void> map(int[] pages) {
        return apply(pages, tensors::map);
    }

    @Override
    public CompletionStage<Void> unmap(int[] pages) {
        return apply(pages, tensors::unmap);
    }

    private CompletionStage<Void> apply(int[] pages, Consumer<int[]> batch) {
        if (closed) {
            return CompletableFuture.failedFuture(new IllegalStateException(device.describe() + ": the mapper is closed"));
        }
        try {
            batch.accept(pages);
            return CompletableFuture.completedFuture(null);
        } catch (RuntimeException e) {
            RankException failure = RankException.of(e);
            String text = failure.text(device.describe(), -1);
            if (failure.code() == FailureCode.BAD_REQUEST || failure.code() == FailureCode.CONFLICT) {
                return CompletableFuture.failedFuture(new IllegalArgumentException(text, failure));
            }
            int[] lost = failure.unrestoredPages().stream().mapToInt(Integer::intValue).toArray();
            for (int page : lost) {
                quarantined.set(page);
            }
            MissReason reason = failure.code() == FailureCode.OUT_OF_MEMORY ? MissReason.OUT_OF_MEMORY : MissReason.MAP_FAILED;
            return CompletableFuture.failedFuture(new PageMapFailure(reason, text, lost, failure));
        }
    }

    /**
     * Unmaps every page, gives the handles back, frees the virtual ranges and releases the idle
     * handles. Later batches fail. A driver failure is thrown; closing again carries on where it
     * stopped.
     */
    @Override
    public void close() {
        closed = true;
        if (!destroyed) {
            tensors.destroy();
            destroyed = true;
        }
        handles.close();
    }

    @Override
    public String toString() {
        return "LocalPageMapper[" + device.describe() + ", " + tensors.geometry().layout() + ", " + tensors.mappedPages() + " of "
                + tensors.geometry().pages() + " pages mapped]";
    }
}

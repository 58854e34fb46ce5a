package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A set of launch shapes given to {@link PagedDecodeAttention#create(List, KvTensors, int, KernelCache)}
 * is checked before any GPU call: a set that cannot run is refused with what is wrong, on a
 * machine with no GPU too.
 */
class LaunchShapeSetTest {

    private static final AttentionShape FP8 = new AttentionShape(32, 8, 128, 16, KvDtype.BF16, KvFormat.FP8);
    private static final Geometry GEOMETRY = Geometry.of(2, 2, FP8.blockBytes(), 4, Layout.PAGE_MAJOR);
    private static final KvTensors TENSORS = KvTensors.of(GEOMETRY, 0x1000_0000L);
    private static final KernelCache NO_COMPILER = new KernelCache((source, name, options) -> {
        throw new AssertionError("nothing may be compiled for a refused set");
    }, "none", null);

    @Test
    void anEmptySetIsRefused() {
        assertThatThrownBy(() -> PagedDecodeAttention.create(List.of(), TENSORS, 0, NO_COMPILER))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one launch shape");
    }

    @Test
    void shapesOfAnotherAttentionShapeAreRefused() {
        KernelOptions defaults = KernelOptions.of(FP8, GEOMETRY);
        AttentionShape otherGroup = new AttentionShape(16, 8, 128, 16, KvDtype.BF16, KvFormat.FP8);
        KernelOptions other = new KernelOptions(otherGroup, GEOMETRY.blocksPerPage(), 2, 2, 0, false, 0).withWarpPerHead();
        assertThatThrownBy(() -> PagedDecodeAttention.create(List.of(defaults, other), TENSORS, 0, NO_COMPILER))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("share its shape");
    }

    @Test
    void theWholeBlockKernelRunsAlone() {
        AttentionShape bf16 = FP8.withKv(KvFormat.BF16);
        Geometry geometry = Geometry.of(2, 2, bf16.blockBytes(), 4, Layout.PAGE_MAJOR);
        KernelOptions defaults = KernelOptions.of(bf16, geometry);
        KernelOptions whole = defaults.wholeBlockOptions().orElseThrow();
        assertThatThrownBy(() -> PagedDecodeAttention.create(List.of(whole, defaults), KvTensors.of(geometry, 0x1000_0000L), 0,
                NO_COMPILER)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("runs alone");
    }

    @Test
    void shapesForAnotherPageAreRefused() {
        KernelOptions otherPage = new KernelOptions(FP8, GEOMETRY.blocksPerPage() + 1, 3, 2, 0, false, 0);
        assertThatThrownBy(() -> PagedDecodeAttention.create(List.of(KernelOptions.of(FP8, GEOMETRY), otherPage), TENSORS, 0,
                NO_COMPILER)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blocks per page");
    }
}

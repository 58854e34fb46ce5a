package io.kvpager.harness.fault;

import io.kvpager.Layout;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault matrix as a whole: the layouts' matrices ({@link FaultMatrixPageMajorTest},
 * {@link FaultMatrixPerLayerTest}) together run every meaningful combination, and every kind, call
 * and layout still appears; prints how many combinations were left out, and why.
 */
class FaultMatrixCoverageTest {

    @Test
    void theMatrixCoversEveryMeaningfulCombination() {
        assertThat(FaultCase.product()).hasSize(6 * 3 * 3 * 6 * 2).doesNotHaveDuplicates();
        assertThat(FaultCase.meaningful()).isNotEmpty()
                .allSatisfy(c -> assertThat(c.meaninglessBecause()).isNull())
                .hasSize((int) FaultCase.product().stream().filter(c -> c.meaninglessBecause() == null).count());
        // every kind, call and layout still appears in the matrix that runs, and each layout's matrix runs its own
        for (FaultKind kind : FaultKind.values()) {
            assertThat(FaultCase.meaningful()).anySatisfy(c -> assertThat(c.kind()).isEqualTo(kind));
        }
        for (FaultOp op : FaultOp.values()) {
            assertThat(FaultCase.meaningful()).anySatisfy(c -> assertThat(c.op()).isEqualTo(op));
        }
        assertThat(Layout.values()).containsExactlyInAnyOrder(Layout.PAGE_MAJOR, Layout.PER_LAYER);
        for (Layout layout : Layout.values()) {
            assertThat(FaultCase.meaningful()).anySatisfy(c -> assertThat(c.layout()).isEqualTo(layout));
        }

        Map<String, Integer> leftOut = new TreeMap<>();
        for (FaultCase c : FaultCase.product()) {
            if (c.meaninglessBecause() != null) {
                leftOut.merge(c.meaninglessBecause(), 1, Integer::sum);
            }
        }
        System.out.printf("fault matrix: %d meaningful combinations of %d%n", FaultCase.meaningful().size(), FaultCase.product().size());
        leftOut.forEach((reason, n) -> System.out.printf("  left out %3d: %s%n", n, reason));
    }
}

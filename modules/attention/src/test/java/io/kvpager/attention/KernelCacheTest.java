package io.kvpager.attention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KernelCacheTest {

    private static final AttentionShape SHAPE = new AttentionShape(32, 8, 128, 16, KvDtype.BF16);

    @Test
    void aModuleIsCompiledOncePerArchitectureAndOptionsAndKeptOnDisk(@TempDir Path directory) throws Exception {
        AtomicInteger compiles = new AtomicInteger();
        KernelCache.Compiler compiler = (source, name, options) -> {
            compiles.incrementAndGet();
            return String.join(" ", options).getBytes();
        };
        KernelOptions options = new KernelOptions(SHAPE, 64, 4, 3, 0, false, 16);
        KernelCache cache = new KernelCache(compiler, "13.0", directory);
        byte[] first = cache.module("sm_90", options);
        assertThat(new String(first)).contains("--gpu-architecture=sm_90", "-DHEAD_DIM=128", "-DGROUP=4", "-DKV_HEADS=8",
                "-DBLOCK_TOKENS=16", "-DBLOCKS_PER_PAGE=64", "-DDTYPE_BF16=1", "-DWARPS=4", "-DSTAGES=3");
        assertThat(cache.module("sm_90", options)).isEqualTo(first);
        assertThat(compiles).hasValue(1);
        cache.module("sm_100", options);
        cache.module("sm_90", options.with(4, 2, 0, false, 16));
        assertThat(compiles).hasValue(3);
        try (var files = Files.list(directory)) {
            assertThat(files.map(p -> p.getFileName().toString()).toList()).hasSize(3).allMatch(n -> n.endsWith(".cubin"));
        }

        KernelCache restarted = new KernelCache(compiler, "13.0", directory);
        assertThat(restarted.module("sm_90", options)).isEqualTo(first);
        assertThat(compiles).as("read back from disk, not compiled again").hasValue(3);
        new KernelCache(compiler, "13.1", directory).module("sm_90", options);
        assertThat(compiles).as("another compiler version compiles again").hasValue(4);
    }

    @Test
    void anotherKernelsSourceIsCompiledOnceUnderItsOwnNameAndKeptApartFromAttentions(@TempDir Path directory) throws Exception {
        List<String> names = new java.util.ArrayList<>();
        KernelCache.Compiler compiler = (source, name, options) -> {
            names.add(name);
            return (source.length() + " " + String.join(" ", options)).getBytes();
        };
        KernelCache cache = new KernelCache(compiler, "13.0", directory);
        String source = "extern \"C\" __global__ void read_weights() {}";
        byte[] first = cache.module(source, "read_weights.cu", "sm_90");
        assertThat(new String(first)).isEqualTo(source.length() + " --gpu-architecture=sm_90 -std=c++17");
        assertThat(cache.module(source, "read_weights.cu", "sm_90")).isEqualTo(first);
        assertThat(names).containsExactly("read_weights.cu");
        cache.module(source + " ", "read_weights.cu", "sm_90");
        cache.module("sm_90", new KernelOptions(SHAPE, 64, 4, 3, 0, false, 16));
        assertThat(names).containsExactly("read_weights.cu", "read_weights.cu", KernelCache.SOURCE);
        assertThat(cache.size()).isEqualTo(3);
        assertThat(new KernelCache(compiler, "13.0", directory).module(source, "read_weights.cu", "sm_90"))
                .as("read back from disk").isEqualTo(first);
        assertThat(names).hasSize(3);
    }

    @Test
    void theDefaultsOneWaveAlternativesAreThreeWarpsTwoWarpsAWarpPerHeadAndSixteenWarpsWhereTheyFit() {
        KernelOptions defaults = new KernelOptions(SHAPE, 64, 4, 2, 0, false, 0);
        KernelOptions perHead = defaults.with(2, 2, 0, false, 0).withWarpPerHead();
        // bf16, head size 128: 16 warps of 2 stages need 256 KiB of shared memory, more than a thread block may have
        assertThat(defaults.oneWaveAlternatives()).containsExactly(defaults.with(3, 2, 0, false, 0), perHead);
        assertThat(defaults.oneWaveAlternatives().getFirst().sharedBytes()).isLessThan(defaults.sharedBytes());
        assertThat(defaults.with(3, 2, 0, false, 0).oneWaveAlternatives()).as("already 3 warps").containsExactly(perHead);
        assertThat(defaults.portable().oneWaveAlternatives()).as("a plan of its own per multiprocessor").isEmpty();
        assertThat(defaults.withWarpPerHead().oneWaveAlternatives()).as("already a warp per head").isEmpty();
        assertThat(defaults.wholeBlockOptions().orElseThrow().oneWaveAlternatives()).as("the whole-block kernel").isEmpty();
        KernelOptions prefetching = defaults.with(4, 2, 128, false, 0);
        assertThat(prefetching.oneWaveAlternatives()).as("the same copy hint")
                .allSatisfy(alternative -> assertThat(alternative.l2Prefetch()).isEqualTo(128));
        // head size 256, 16 query heads per KV head: 3 warps of 2 stages still fit a thread block
        KernelOptions wide = new KernelOptions(new AttentionShape(32, 2, 256, 16, KvDtype.BF16), 64, 4, 2, 0, false, 0);
        assertThat(wide.oneWaveAlternatives()).contains(wide.with(3, 2, 0, false, 0));
        // FP8 pages, head size 128: 3 warps by default; half the bytes a tile, so 16 warps of 2 stages fit (132 KiB)
        AttentionShape fp8 = new AttentionShape(32, 8, 128, 16, KvDtype.BF16, KvFormat.FP8);
        KernelOptions fp8Defaults = KernelOptions.of(fp8, Geometry.of(2, 2, fp8.blockBytes(), 4, Layout.PAGE_MAJOR));
        assertThat(fp8Defaults.warps()).isEqualTo(3);
        assertThat(fp8Defaults.oneWaveAlternatives()).containsExactly(fp8Defaults.with(2, 2, 0, false, 0).withWarpPerHead(),
                fp8Defaults.with(16, 2, 0, false, 0));
        assertThat(fp8Defaults.with(16, 2, 0, false, 0).sharedBytes()).isEqualTo(16 * 2 * (2 * 16 * 128 + 2 * 16 * 4));
    }

    @Test
    void aWarpPerHeadTakesWarpsHeadsPerThreadBlockAndKeepsItsResultInItsOwnRing() {
        KernelOptions defaults = new KernelOptions(SHAPE, 64, 4, 2, 0, false, 0);
        assertThat(defaults.blocksPerChunk()).as("a thread block per KV head").isEqualTo(8);
        KernelOptions perWarp = defaults.withWarpPerHead();
        assertThat(perWarp.warpPerHead()).isTrue();
        assertThat(perWarp.blocksPerChunk()).isEqualTo(2);
        assertThat(defaults.with(3, 2, 0, false, 0).withWarpPerHead().blocksPerChunk()).as("8 heads over 3 warps").isEqualTo(3);
        assertThat(perWarp.sharedBytes()).isEqualTo(defaults.sharedBytes());
        assertThat(perWarp.defines()).contains("-DWARP_HEADS=1");
        assertThat(defaults.defines()).contains("-DWARP_HEADS=0");
        // head size 64, 16 query heads per KV head, FP8: a warp's result (16 × 66 floats) fits its ring of 2 stages
        AttentionShape narrow = new AttentionShape(16, 1, 64, 16, KvDtype.BF16, KvFormat.FP8);
        KernelOptions narrowPerWarp = new KernelOptions(narrow, 64, 2, 2, 0, false, 0).withWarpPerHead();
        assertThat(narrowPerWarp.sharedBytes()).isEqualTo(2 * Math.max(2 * (2 * 16 * 64 + 2 * 16 * 4), 16 * 66 * 4));
        assertThatThrownBy(() -> new KernelOptions(SHAPE, 64, 8, 3, 0, false, 0, true, 1, true))
                .hasMessageContaining("mode of the chunked kernel");
        assertThatThrownBy(() -> defaults.wholeBlockOptions().orElseThrow().withWarpPerHead())
                .hasMessageContaining("mode of the chunked kernel");
        assertThatThrownBy(() -> defaults.with(17, 2, 0, false, 0)).hasMessageContaining("warps must be 1..16, got 17");
    }

    @Test
    void theSourceShipsWithTheModule() {
        assertThat(KernelCache.source()).contains("extern \"C\" __global__", "paged_decode", "paged_decode_merge", "paged_read");
    }

    @Test
    void optionsOutsideWhatTheKernelTakesAreRefused() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(SHAPE, 64, 4, 3, 32, false, 16))
                .hasMessageContaining("l2Prefetch must be 0, 64, 128 or 256");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(
                new AttentionShape(16, 2, 256, 16, KvDtype.BF16), 64, 8, 4, 0, false, 16))
                .hasMessageContaining("shared memory");
        assertThat(new KernelOptions(SHAPE, 64, 4, 3, 0, false, 16).sharedBytes()).isEqualTo(4 * 3 * 2 * 16 * 256);
        KernelOptions chunked = new KernelOptions(SHAPE, 64, 4, 2, 0, false, 16);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(SHAPE, 64, 4, 3, 0, false, 0, true, 1))
                .hasMessageContaining("one warp per KV head: warps must be 8");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(SHAPE, 64, 8, 3, 64, false, 0, true, 1))
                .hasMessageContaining("bulk copies take none");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> chunked.wholeBlocks(4, 0))
                .hasMessageContaining("shared memory");
        AttentionShape sixteenHeads = new AttentionShape(32, 16, 64, 16, KvDtype.BF16);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(sixteenHeads, 64, 16, 2, 0, false, 0, true, 1))
                .hasMessageContaining("at most 8 KV heads");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> chunked.wholeBlocks(2, 0, 3))
                .hasMessageContaining("tokensPerCopy must be 1, 2, 4, 8 or 16");
        AttentionShape eightTokens = new AttentionShape(32, 8, 128, 8, KvDtype.BF16);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new KernelOptions(eightTokens, 64, 8, 2, 0, false, 0, true, 16))
                .hasMessageContaining("would cross the end of a block of 8");
        assertThat(chunked.wholeBlocks(2, 0, 4).sharedBytes()).isEqualTo(2 * (2 * (16 * 8 * 256 + 4 * 16) + 16) + 16);
    }

    @Test
    void theDefaultIsTheChunkedKernelAndTheWholeBlockOneIsOfferedWhereItFits() {
        Geometry geometry = new Geometry(4, 2, SHAPE.blockBytes(), 2L << 20, 8, Layout.PAGE_MAJOR);
        KernelOptions defaults = KernelOptions.of(SHAPE, geometry);
        assertThat(defaults.wholeBlocks()).isFalse();
        assertThat(defaults.wholeBlockOptions()).isPresent();
        assertThat(defaults).isEqualTo(new KernelOptions(SHAPE, 64, 4, 2, 0, false, 0));
        KernelOptions whole = defaults.wholeBlockOptions().orElseThrow();
        assertThat(whole.wholeBlocks()).isTrue();
        assertThat(whole.warps()).isEqualTo(8);
        assertThat(whole.stages()).isEqualTo(3);
        // 3 stages of K and V, 16 token rows of 8 heads × 256 bytes padded by 16, two barriers each, the flag
        assertThat(whole.sharedBytes()).isEqualTo(3 * (2 * 16 * (8 * 256 + 16) + 16) + 16);
        assertThat(whole.threads()).as("8 computing warps and the copying one").isEqualTo(288);
        assertThat(defaults.portable().blocksPerMultiprocessor()).isEqualTo(SplitPlan.BLOCKS_PER_MULTIPROCESSOR);
        // 8 heads of 512 bytes: not even 2 stages fit
        AttentionShape large = new AttentionShape(32, 8, 256, 16, KvDtype.BF16);
        Geometry largeGeometry = new Geometry(4, 2, large.blockBytes(), 2L << 20, 8, Layout.PAGE_MAJOR);
        assertThat(KernelOptions.of(large, largeGeometry).wholeBlockOptions()).isEmpty();
        AttentionShape many = new AttentionShape(32, 16, 64, 16, KvDtype.BF16);
        Geometry manyGeometry = new Geometry(4, 2, many.blockBytes(), 2L << 20, 8, Layout.PAGE_MAJOR);
        assertThat(KernelOptions.of(many, manyGeometry).wholeBlockOptions()).isEmpty();
    }
}

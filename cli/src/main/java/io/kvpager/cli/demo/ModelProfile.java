package io.kvpager.cli.demo;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The KV shape of a served model: its attention layers, KV heads and head size, cut into blocks of
 * {@code blockTokens} tokens stored as {@code kv} says (16-bit elements, or FP8 e4m3 with a scale per
 * token and KV head: about twice the tokens per page). Under tensor parallelism each rank holds {@code kvHeads / tp}
 * heads of every layer (at least one: heads are replicated when tp exceeds them).
 *
 * @param name preset name used on the command line ({@code 7b})
 * @param layers attention layers
 * @param kvHeads key/value heads (fewer than query heads with grouped-query attention)
 * @param headDim elements per head
 * @param blockTokens tokens per KV block
 * @param kv how the blocks store K and V
 * @param parameters the model's weights, in parameters: what a decode step reads besides the KV
 */
public record ModelProfile(String name, int layers, int kvHeads, int headDim, int blockTokens, KvFormat kv, long parameters) {

    /** K and V */
    private static final int KV_BUFFERS = 2;

    /** A 7B-like model: 32 layers, 32 KV heads of 128, 6.74 billion parameters (Llama 2 7B's shape). */
    public static final ModelProfile SEVEN_B = new ModelProfile("7b", 32, 32, 128, 16, KvFormat.BF16, 6_738_000_000L);
    /** A 13B-like model: 40 layers, 40 KV heads of 128, 13.0 billion parameters (Llama 2 13B's shape). */
    public static final ModelProfile THIRTEEN_B = new ModelProfile("13b", 40, 40, 128, 16, KvFormat.BF16, 13_016_000_000L);
    /** A 70B-like model: 80 layers, 8 KV heads of 128 (grouped-query attention), 70.6 billion parameters (Llama 3 70B's shape). */
    public static final ModelProfile SEVENTY_B = new ModelProfile("70b", 80, 8, 128, 16, KvFormat.BF16, 70_554_000_000L);

    public static final List<ModelProfile> PRESETS = List.of(SEVEN_B, THIRTEEN_B, SEVENTY_B);

    /**
     * A model whose blocks hold 16-bit elements, with the parameters of a dense transformer of its
     * shape without grouped-query attention: 12 x layers x (kvHeads x headDim)^2.
     */
    public ModelProfile(String name, int layers, int kvHeads, int headDim, int blockTokens) {
        this(name, layers, kvHeads, headDim, blockTokens, KvFormat.BF16, 12L * layers * (long) kvHeads * headDim * kvHeads * headDim);
    }

    /** The same model with blocks in {@code format}. */
    public ModelProfile withKv(KvFormat format) {
        return new ModelProfile(name, layers, kvHeads, headDim, blockTokens, format, parameters);
    }

    /** Bytes of this model's weights stored as {@code format}, over all its ranks. */
    public long weightBytes(WeightFormat format) {
        return Math.multiplyExact(parameters, format.bytesPerParameter());
    }

    public ModelProfile {
        if (kv == null) {
            throw new IllegalArgumentException("a model needs a KV format: bf16 or fp8");
        }
        if (layers <= 0 || kvHeads <= 0 || headDim <= 0 || blockTokens <= 0) {
            throw new IllegalArgumentException("a model needs positive layers, kvHeads, headDim and blockTokens");
        }
        if (parameters <= 0) {
            throw new IllegalArgumentException("a model needs a positive parameter count, got " + parameters);
        }
    }

    /** The preset called {@code name}, or an error listing the presets. */
    public static ModelProfile preset(String name) {
        String key = name.strip().toLowerCase(Locale.ROOT);
        return PRESETS.stream().filter(p -> p.name.equals(key)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no model preset '" + name + "'; presets: "
                        + PRESETS.stream().map(ModelProfile::name).collect(Collectors.joining(", "))));
    }

    /** The cache instance name serving this model. */
    public String instance() {
        return "model-" + name;
    }

    /** KV heads on one rank. */
    public int headsPerRank(int tp) {
        if (tp <= 0) {
            throw new IllegalArgumentException("tp must be at least 1, got " + tp);
        }
        return Math.max(1, kvHeads / tp);
    }

    /** Bytes of one block of one layer and buffer on one rank. */
    public long blockBytes(int tp) {
        return kv.blockBytes(blockTokens, headsPerRank(tp), headDim);
    }

    /** One rank's geometry: {@code PAGE_MAJOR} with 2 MiB pages and {@code pages} virtual page ids. */
    public Geometry geometry(int tp, int pages) {
        return new Geometry(layers, KV_BUFFERS, blockBytes(tp), Geometry.DEFAULT_PAGE_BYTES, pages, Layout.PAGE_MAJOR);
    }

    /** GPU bytes one page id costs across all {@code tp} ranks. */
    public long bytesPerPageId(int tp) {
        return Geometry.DEFAULT_PAGE_BYTES * layers * KV_BUFFERS * tp;
    }

    /** GPU bytes one token's KV costs across all ranks, ignoring the unused tail of a page. */
    public long bytesPerToken(int tp) {
        return (long) layers * KV_BUFFERS * kv.tokenBytes(headsPerRank(tp), headDim) * tp;
    }

    /** KV tokens one GiB of GPU memory holds across all ranks, counting whole blocks per 2 MiB page. */
    public long tokensPerGiB(int tp) {
        long blocksPerPage = Geometry.DEFAULT_PAGE_BYTES / blockBytes(tp);
        return blocksPerPage * blockTokens * (1L << 30) / bytesPerPageId(tp);
    }

    /** Virtual page ids that let this model alone fill {@code gpuBytes}, the whole GPU. */
    public int pagesToFill(int tp, long gpuBytes) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE / 2, gpuBytes / bytesPerPageId(tp)));
    }
}

package io.kvpager.cli.demo;

/**
 * How the demo's models hold their weights on the shared GPU ({@code kvpager demo --weights}).
 * Weights take GPU memory the caches cannot have, and every decode step of a model reads all of
 * them: that fixed cost per step is why a larger batch serves more tokens per second, so why
 * memory for KV is worth sharing. {@link #NONE} leaves them out (steps read only KV).
 */
public enum WeightFormat implements FlagChoice {
    FP8("one byte per parameter (FP8 weights, as three such models fit one 141 GB GPU)", 1),
    BF16("two bytes per parameter", 2),
    NONE("no weights: the caches may take the whole budget and steps read only KV", 0);

    private final String meaning;
    private final int bytesPerParameter;

    WeightFormat(String meaning, int bytesPerParameter) {
        this.meaning = meaning;
        this.bytesPerParameter = bytesPerParameter;
    }

    @Override
    public String meaning() {
        return meaning;
    }

    int bytesPerParameter() {
        return bytesPerParameter;
    }

    /** The format called {@code name} on the command line, or an error naming the formats. */
    public static WeightFormat of(String name) {
        return FlagChoice.of(WeightFormat.class, name, "weight format", "formats");
    }
}

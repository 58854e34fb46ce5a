package io.kvpager.cli.demo;

/** The shapes of seeded trace {@link ServingTrace} generates ({@code kvpager demo --trace-preset}). */
public enum TracePreset implements FlagChoice {
    /**
     * One model bursts at a time, in turn (the first preset): each burst wants about 80 % of the GPU,
     * over a trickle of 5 % (before the run sizes the trace to its {@code --load}); bursts meet only through the tails of their requests.
     */
    ROTATING("one model bursts at a time, in turn, over a small trickle"),
    /**
     * Every model bursts once a round, each burst starting a quarter of a round after the previous
     * one and lasting three eighths of it: a third of each burst's arrivals overlap the next one's.
     */
    OVERLAPPING("bursts in turn, each overlapping a third of the next one"),
    /**
     * Every model has a steady base of about 15 % of the caches' memory all the time and bursts of
     * about 60 % at a time drawn independently per model and round, so bursts meet by chance, as the
     * bursts of unrelated services do. These shares are its shape: the run sizes the whole trace to
     * its {@code --load}.
     */
    STEADY_BURSTS("a steady base for every model plus bursts at independent random times");

    private final String meaning;

    TracePreset(String meaning) {
        this.meaning = meaning;
    }

    @Override
    public String meaning() {
        return meaning;
    }

    /** The preset called {@code name} on the command line, or an error naming the presets. */
    public static TracePreset of(String name) {
        return FlagChoice.of(TracePreset.class, name, "trace preset", "presets");
    }
}

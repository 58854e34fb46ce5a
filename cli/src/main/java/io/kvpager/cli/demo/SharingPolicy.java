package io.kvpager.cli.demo;

/**
 * How the models of a demo run share the GPU's budget. {@code kvpager demo --compare} runs the
 * same trace under each, one after another.
 */
public enum SharingPolicy implements FlagChoice {
    /** Each model limited to an equal share of the GPU's budget, per rank, as {@code --limit} does. */
    STATIC("each model limited to budget / models (per rank: / tp), as --limit does"),
    /** Elastic sharing without guarantees: memory goes to whoever asks first ({@code guaranteePercent 0} on every cache). */
    FIRST_COME("elastic, no guarantee (guaranteePercent 0 on every cache): memory goes to whoever asks first"),
    /** Guaranteed equal shares, borrowing beyond them while memory is free, reclaim from the borrowers. */
    ARBITRATED("an equal guaranteed share each, borrowing while memory is free, reclaim from borrowers");

    private final String meaning;

    SharingPolicy(String meaning) {
        this.meaning = meaning;
    }

    @Override
    public String meaning() {
        return meaning;
    }

    /** The policy called {@code name} on the command line, or an error naming the policies. */
    public static SharingPolicy of(String name) {
        return FlagChoice.of(SharingPolicy.class, name, "sharing policy", "policies");
    }
}

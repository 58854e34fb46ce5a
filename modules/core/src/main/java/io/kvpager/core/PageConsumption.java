package io.kvpager.core;

/**
 * The reserve marks in force: fixed ones as configured, or adaptive ones that follow how many
 * pages allocations took into use per refill interval.
 *
 * <p>The ledger counts the pages its allocations take; each {@link PageLedger#refill()} closes an
 * interval and folds the count into an exponentially weighted mean. A caller that refills about
 * once per map round trip thus makes the mean what allocations consume while one map is in flight,
 * which is what the low mark must cover for them never to wait on a map; the high mark is twice
 * that, so one refill batch lasts about two round trips. Both stay within the configured bounds,
 * and an idle pool's mean decays so that it holds no more than its floor.
 */
final class PageConsumption {

    /** Weight of the newest interval: about the last three intervals dominate. */
    static final double WEIGHT = 0.3;

    private final ReserveMarks configured;
    private double pagesPerInterval;
    private int takenThisInterval;
    private int low;
    private int high;

    PageConsumption(ReserveMarks configured) {
        this.configured = configured;
        settle();
    }

    /** Allocations took {@code pages} pages into use. */
    void taken(int pages) {
        takenThisInterval += pages;
    }

    /** Ends a refill interval: folds its consumption into the mean and moves the marks. */
    void endInterval() {
        pagesPerInterval = WEIGHT * takenThisInterval + (1 - WEIGHT) * pagesPerInterval;
        takenThisInterval = 0;
        settle();
    }

    private void settle() {
        if (!configured.adaptive()) {
            low = configured.low();
            high = configured.high();
            return;
        }
        // A mean below a tenth of a page rounds to nothing, so an idle pool's marks fall to the floor.
        int expected = (int) Math.min(Integer.MAX_VALUE, Math.ceil(pagesPerInterval - 0.1));
        low = Math.clamp(expected, configured.low(), configured.high());
        high = Math.clamp(2L * low, low, configured.high());
    }

    int low() {
        return low;
    }

    int high() {
        return high;
    }

    /** The mean pages taken per refill interval. */
    double pagesPerInterval() {
        return pagesPerInterval;
    }

    ReserveMarks configured() {
        return configured;
    }
}

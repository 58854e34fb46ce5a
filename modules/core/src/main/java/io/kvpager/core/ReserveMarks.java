package io.kvpager.core;

/**
 * How many mapped idle pages a pool keeps ready: a refill maps pages when the reserve drops below
 * {@code low} and brings it up to {@code high}; pages freed while the reserve is at {@code high}
 * are given back.
 *
 * <p>With {@code adaptive}, the marks in force follow the recent page consumption instead (see
 * {@link PageLedger#refill()}): {@code low} is then the least low mark and {@code high} the most
 * either mark may reach, so an idle pool shrinks its reserve down to {@code low} and a busy one
 * grows it up to {@code high}.
 *
 * @param low the low mark, or the least low mark when adaptive
 * @param high the high mark, or the ceiling of both marks when adaptive
 * @param adaptive whether the marks follow the page consumption rate
 */
public record ReserveMarks(int low, int high, boolean adaptive) {

    public ReserveMarks {
        if (low < 0) {
            throw new IllegalArgumentException("the low reserve mark cannot be negative: " + low);
        }
        if (high < low) {
            throw new IllegalArgumentException("the high reserve mark " + high + " is below the low mark " + low);
        }
    }

    /** Fixed marks. */
    public static ReserveMarks fixed(int low, int high) {
        return new ReserveMarks(low, high, false);
    }

    /** Marks that follow consumption between {@code floor} (least low mark) and {@code ceiling}. */
    public static ReserveMarks adaptive(int floor, int ceiling) {
        return new ReserveMarks(floor, ceiling, true);
    }

    /** No reserve: every page is mapped by the allocation that needs it and given back when empty. */
    public static ReserveMarks none() {
        return new ReserveMarks(0, 0, false);
    }
}

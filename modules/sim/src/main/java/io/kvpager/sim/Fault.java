package io.kvpager.sim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One entry of a {@link FaultPlan}: which driver calls it aims at ({@code op}, optionally one
 * {@code rank} and one {@code page}), which of those it fires on ({@code nth}, {@code times}) and
 * what it does then: wait {@code delayMs} and go on, fail with {@code error}, or {@code hang} until
 * the device closes or the plan's hangs are released.
 *
 * <p>Counting: the fault counts the calls it matches; it fires on matching calls number
 * {@code nth}, {@code nth + 1}, ... for {@code times} calls. {@code nth} defaults to 1; {@code times}
 * defaults to 1 when {@code nth} is given and to {@link #UNLIMITED} otherwise, so
 * {@code {op: map, nth: 3}} fails the third map only and {@code {op: map}} fails every map.
 *
 * @param op the driver call
 * @param rank the device's rank label ({@code "pp0/tp1"}), or {@code null} for any rank
 * @param page the page id, {@code (address - rangeBase) / size} of the call, or {@link #ANY_PAGE};
 *     only for {@code map}, {@code access} and {@code unmap}
 * @param nth the first matching call it fires on, 1-based
 * @param times how many matching calls it fires on, {@link #UNLIMITED} for every one
 * @param error the driver error name to fail with, or {@code null}
 * @param delayMs milliseconds to wait before the call
 * @param hang whether the call blocks until released, then fails
 */
public record Fault(DriverCall op, String rank, long page, long nth, long times, String error, long delayMs, boolean hang) {

    /** {@code page} for a fault that matches every page. */
    public static final long ANY_PAGE = -1;
    /** {@code times} for a fault that fires on every matching call. */
    public static final long UNLIMITED = Long.MAX_VALUE;

    /** The keys a fault entry may carry. */
    public static final List<String> KEYS = List.of("op", "rank", "page", "nth", "times", "error", "delayMs", "hang");

    private static final Set<String> KEY_SET = Set.copyOf(KEYS);

    public Fault {
        if (op == null) {
            throw new IllegalArgumentException("op is required: one of " + DriverCall.acceptedNames());
        }
        if (rank != null && rank.isBlank()) {
            throw new IllegalArgumentException("rank must name a rank such as \"pp0/tp1\", or be absent for any rank");
        }
        if (page < ANY_PAGE) {
            throw new IllegalArgumentException("page must be >= 0, got " + page);
        }
        if (page != ANY_PAGE && !op.takesPage()) {
            throw new IllegalArgumentException("page applies only to map, access and unmap, not to " + op.shortName());
        }
        if (nth < 1) {
            throw new IllegalArgumentException("nth counts matching calls from 1, got " + nth);
        }
        if (times < 1) {
            throw new IllegalArgumentException("times must be at least 1, got " + times);
        }
        if (error != null && !CuResult.isErrorName(error)) {
            throw new IllegalArgumentException("error must be a driver error name such as CUDA_ERROR_OUT_OF_MEMORY, got \"" + error + "\"");
        }
        if (delayMs < 0) {
            throw new IllegalArgumentException("delayMs must be >= 0, got " + delayMs);
        }
        if (error == null && delayMs == 0 && !hang) {
            throw new IllegalArgumentException("a fault must do something: give error, delayMs > 0 or hang: true");
        }
    }

    /** Fails every {@code op} call with {@code error}. */
    public static Fault error(DriverCall op, String error) {
        return new Fault(op, null, ANY_PAGE, 1, UNLIMITED, error, 0, false);
    }

    /** Delays every {@code op} call by {@code delayMs}, then lets it proceed. */
    public static Fault delay(DriverCall op, long delayMs) {
        return new Fault(op, null, ANY_PAGE, 1, UNLIMITED, null, delayMs, false);
    }

    /** Hangs every {@code op} call until the device closes or {@link FaultPlan#releaseHangs()}. */
    public static Fault hang(DriverCall op) {
        return new Fault(op, null, ANY_PAGE, 1, UNLIMITED, null, 0, true);
    }

    /** Only calls made by the device of {@code rank}. */
    public Fault onRank(String rank) {
        return new Fault(op, rank, page, nth, times, error, delayMs, hang);
    }

    /** Only calls whose address lies in page id {@code page} of its reserved range. */
    public Fault onPage(long page) {
        if (page < 0) {
            throw new IllegalArgumentException("page must be >= 0, got " + page);
        }
        return new Fault(op, rank, page, nth, times, error, delayMs, hang);
    }

    /** Fires on the {@code n}-th matching call; once, unless {@link #times(long)} says more. */
    public Fault nth(long n) {
        return new Fault(op, rank, page, n, times == UNLIMITED ? 1 : times, error, delayMs, hang);
    }

    /** Fires on {@code count} matching calls, from the {@code nth}. */
    public Fault times(long count) {
        return new Fault(op, rank, page, nth, count, error, delayMs, hang);
    }

    /** Also fails with {@code errorName} (after any delay or hang). */
    public Fault withError(String errorName) {
        return new Fault(op, rank, page, nth, times, errorName, delayMs, hang);
    }

    /** Also waits {@code ms} before the call. */
    public Fault withDelayMs(long ms) {
        return new Fault(op, rank, page, nth, times, error, ms, hang);
    }

    /** Whether this fault aims at a call of {@code call} by {@code deviceRank} at {@code callPage}. */
    boolean matches(DriverCall call, String deviceRank, long callPage) {
        return op == call
                && (rank == null || rank.equals(deviceRank))
                && (page == ANY_PAGE || page == callPage);
    }

    /** This fault as a config entry; {@link #parse} of it gives an equal fault. */
    public Map<String, Object> toMap() {
        Map<String, Object> map = new LinkedHashMap<>();
        map.put("op", op.shortName());
        if (rank != null) {
            map.put("rank", rank);
        }
        if (page != ANY_PAGE) {
            map.put("page", page);
        }
        if (nth != 1) {
            map.put("nth", nth);
        }
        if (times != UNLIMITED || nth != 1) { // nth alone would read back as one call
            map.put("times", times);
        }
        if (error != null) {
            map.put("error", error);
        }
        if (delayMs != 0) {
            map.put("delayMs", delayMs);
        }
        if (hang) {
            map.put("hang", true);
        }
        return map;
    }

    /**
     * Reads one config entry. Every problem is an {@link IllegalArgumentException} that names the
     * entry ({@code faults[2]}) and the field.
     *
     * @param entry the entry, with keys from {@link #KEYS}
     * @param index its position in the list, for messages
     */
    public static Fault parse(Map<String, ?> entry, int index) {
        String where = "faults[" + index + "]";
        if (entry == null) {
            throw new IllegalArgumentException(where + ": an entry must be an object with keys " + KEYS);
        }
        for (String key : entry.keySet()) {
            if (!KEY_SET.contains(key)) {
                throw new IllegalArgumentException(where + ": unknown key \"" + key + "\"; accepted keys: " + KEYS);
            }
        }
        Object opValue = entry.get("op");
        if (!(opValue instanceof String opName)) {
            throw new IllegalArgumentException(where + ".op: " + (opValue == null ? "is required" : "must be a string, got " + describe(opValue))
                    + "; one of " + DriverCall.acceptedNames());
        }
        DriverCall op = DriverCall.named(opName).orElseThrow(() -> new IllegalArgumentException(
                where + ".op: unknown call \"" + opName + "\"; one of " + DriverCall.acceptedNames()));
        String rank = null;
        if (entry.containsKey("rank")) {
            if (!(entry.get("rank") instanceof String r) || r.isBlank()) {
                throw new IllegalArgumentException(where + ".rank: must be a rank label such as \"pp0/tp1\", got " + describe(entry.get("rank")));
            }
            rank = r;
        }
        long page = ANY_PAGE;
        if (entry.containsKey("page")) {
            page = integer(entry, "page", 0, where);
            if (!op.takesPage()) {
                throw new IllegalArgumentException(where + ".page: applies only to map, access and unmap, not to " + op.shortName());
            }
        }
        long nth = entry.containsKey("nth") ? integer(entry, "nth", 1, where) : 1;
        long times = entry.containsKey("times") ? integer(entry, "times", 1, where)
                : entry.containsKey("nth") ? 1 : UNLIMITED;
        String error = null;
        if (entry.containsKey("error")) {
            if (!(entry.get("error") instanceof String e) || !CuResult.isErrorName(e)) {
                throw new IllegalArgumentException(where + ".error: must be a driver error name matching CUDA_ERROR_[A-Z_]+, got "
                        + describe(entry.get("error")));
            }
            error = e;
        }
        long delayMs = entry.containsKey("delayMs") ? integer(entry, "delayMs", 0, where) : 0;
        boolean hang = false;
        if (entry.containsKey("hang")) {
            if (!(entry.get("hang") instanceof Boolean h)) {
                throw new IllegalArgumentException(where + ".hang: must be true or false, got " + describe(entry.get("hang")));
            }
            hang = h;
        }
        if (error == null && delayMs == 0 && !hang) {
            throw new IllegalArgumentException(where + ": does nothing; give error, delayMs > 0 or hang: true");
        }
        return new Fault(op, rank, page, nth, times, error, delayMs, hang);
    }

    private static long integer(Map<String, ?> entry, String key, long min, String where) {
        Object value = entry.get(key);
        long number = switch (value) {
            case Integer i -> i;
            case Long l -> l;
            case Short s -> s;
            case Byte b -> b;
            case null, default -> throw new IllegalArgumentException(
                    where + "." + key + ": must be an integer >= " + min + ", got " + describe(value));
        };
        if (number < min) {
            throw new IllegalArgumentException(where + "." + key + ": must be an integer >= " + min + ", got " + number);
        }
        return number;
    }

    static String describe(Object value) {
        if (value == null) {
            return "null";
        }
        return value.getClass().getSimpleName() + " " + (value instanceof String ? "\"" + value + "\"" : value);
    }
}

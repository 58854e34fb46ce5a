package io.kvpager.internal.options;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The rules every kvpager option and request field is checked against, whatever it was read from:
 * {@code KvCacheOptions}, {@code RankWorkerOptions}, {@code ClusterNodeOptions} and the workers'
 * request bodies. One rule, one message: a worker refuses exactly the names its coordinator
 * refuses, with the same words.
 *
 * <p>Each check returns the value it accepted, so a setter reads {@code this.tp = atLeast("tp", tp, 1)},
 * and throws an {@link IllegalArgumentException} naming the field and what it held otherwise.
 */
public final class OptionRules {

    /** The longest instance or cluster name: it is part of event-bus addresses and thread names. */
    public static final int MAX_NAME = 64;
    /** The device kinds a rank worker can open, in the order messages list them. */
    public static final List<String> DEVICE_KINDS = List.of("sim", "cuda");

    private static final Pattern INSTANCE_NAME = Pattern.compile("[A-Za-z0-9_-]{1," + MAX_NAME + "}");
    private static final Pattern CLUSTER_NAME = Pattern.compile("[A-Za-z0-9_.-]{1," + MAX_NAME + "}");

    private OptionRules() {
    }

    /** A cache's instance name: 1 to 64 letters, digits, '-' or '_' (it is part of event-bus addresses). */
    public static String instanceName(String field, String value) {
        if (value == null || !INSTANCE_NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(field + " must be 1 to " + MAX_NAME + " letters, digits, '-' or '_' (it is part of "
                    + "event-bus addresses), got " + shown(value));
        }
        return value;
    }

    /** A cluster's name: 1 to 64 letters, digits, '.', '-' or '_'. */
    public static String clusterName(String field, String value) {
        if (value == null || !CLUSTER_NAME.matcher(value).matches()) {
            throw new IllegalArgumentException(field + " must be 1 to " + MAX_NAME + " letters, digits, '.', '-' or '_', got " + shown(value));
        }
        return value;
    }

    /** One of {@link #DEVICE_KINDS}. */
    public static String deviceKind(String field, String value) {
        if (value == null || !DEVICE_KINDS.contains(value)) {
            throw new IllegalArgumentException(field + " must be 'sim' or 'cuda', got " + shown(value));
        }
        return value;
    }

    /** {@code value >= min}. */
    public static int atLeast(String field, int value, int min) {
        return (int) atLeast(field, (long) value, min);
    }

    /** {@code value >= min}. */
    public static long atLeast(String field, long value, long min) {
        if (value < min) {
            throw new IllegalArgumentException(field + " must be >= " + min + ", got " + value);
        }
        return value;
    }

    /** {@code min <= value <= max}. */
    public static int inRange(String field, int value, int min, int max) {
        return (int) inRange(field, (long) value, min, max);
    }

    /** A share in whole percent, 1 to 100: of a GPU's memory ({@code gpuMemoryPercent}). */
    public static int percent(String field, int value) {
        return inRange(field, value, 1, 100);
    }

    /** {@code min <= value <= max}. */
    public static long inRange(String field, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(field + " must be in " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    /** A string that is set but not blank; {@code null} passes (the option stays unset). */
    public static String notBlank(String field, String value) {
        if (value != null && value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank; leave it unset instead");
        }
        return value;
    }

    /** The refusal of a required field that is missing or null. */
    public static IllegalArgumentException required(String field) {
        return new IllegalArgumentException(field + " is required");
    }

    /** The refusal of a value of the wrong JSON type: {@code tp must be an integer, got "4" (String)}. */
    public static IllegalArgumentException typeError(String field, String expected, Object value) {
        return new IllegalArgumentException(field + " must be " + expected + ", got " + describe(value));
    }

    /**
     * A JSON value as refusals show it, with its type, so that {@code 1.0} and {@code "1"} are
     * told apart from {@code 1}: {@code "fast" (String)}, {@code 1.5 (Double)}, {@code nothing}.
     */
    public static String describe(Object value) {
        if (value == null) {
            return "nothing";
        }
        return value instanceof String s ? "\"" + s + "\" (String)" : value + " (" + value.getClass().getSimpleName() + ")";
    }

    private static String shown(String value) {
        return value == null ? "nothing" : "'" + value + "'";
    }
}

package io.kvpager.protocol;

/**
 * kvpager's event-bus addresses, built and read back here only: a rank worker's,
 * {@code kvpager.<instance>.pp<P>.tp<R>}, and a cache coordinator's,
 * {@code kvpager.<instance>.coordinator}. An instance name is letters, digits, {@code '-'} and
 * {@code '_'}, so neither form can be read as the other.
 */
public sealed interface BusAddress {

    /** What every kvpager address starts with. */
    String PREFIX = "kvpager.";

    /** The cache instance the address belongs to. */
    String instance();

    /** The address as the event bus carries it. */
    String address();

    /** A rank worker's address, {@code kvpager.<instance>.pp<P>.tp<R>}. */
    static String rank(String instance, int pp, int tp) {
        return PREFIX + instance + ".pp" + pp + ".tp" + tp;
    }

    /** A cache coordinator's address, {@code kvpager.<instance>.coordinator}. */
    static String coordinator(String instance) {
        return PREFIX + instance + COORDINATOR_SUFFIX;
    }

    /**
     * Reads an address back: a {@link Rank}, a {@link Coordinator}, or null for any other address
     * (kvpager's own shared-data and broker addresses included).
     */
    static BusAddress parse(String address) {
        if (address == null || !address.startsWith(PREFIX)) {
            return null;
        }
        if (address.endsWith(COORDINATOR_SUFFIX) && address.length() > PREFIX.length() + COORDINATOR_SUFFIX.length()) {
            String instance = address.substring(PREFIX.length(), address.length() - COORDINATOR_SUFFIX.length());
            return isInstanceName(instance) ? new Coordinator(instance) : null;
        }
        int tpAt = address.lastIndexOf(".tp");
        int ppAt = tpAt < 0 ? -1 : address.lastIndexOf(".pp", tpAt - 1);
        if (ppAt < PREFIX.length()) {
            return null;
        }
        String instance = address.substring(PREFIX.length(), ppAt);
        int pp = rankNumber(address, ppAt + 3, tpAt);
        int tp = rankNumber(address, tpAt + 3, address.length());
        return isInstanceName(instance) && pp >= 0 && tp >= 0 ? new Rank(instance, pp, tp) : null;
    }

    /** A rank worker's address. */
    record Rank(String instance, int pp, int tp) implements BusAddress {
        @Override
        public String address() {
            return rank(instance, pp, tp);
        }

        /** The rank's name in messages and meters, {@code pp<P>/tp<R>}. */
        public String rankName() {
            return "pp" + pp + "/tp" + tp;
        }
    }

    /** A cache coordinator's address. */
    record Coordinator(String instance) implements BusAddress {
        @Override
        public String address() {
            return coordinator(instance);
        }
    }

    /** The end of a coordinator's address. */
    String COORDINATOR_SUFFIX = ".coordinator";

    private static boolean isInstanceName(String name) {
        if (name.isEmpty()) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')) {
                return false;
            }
        }
        return true;
    }

    /** The decimal number in {@code text[from, to)}, or -1 when it is not one an int holds. */
    private static int rankNumber(String text, int from, int to) {
        if (from >= to || to - from > 9) {
            return -1;
        }
        int value = 0;
        for (int i = from; i < to; i++) {
            char c = text.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            value = value * 10 + (c - '0');
        }
        return value;
    }
}

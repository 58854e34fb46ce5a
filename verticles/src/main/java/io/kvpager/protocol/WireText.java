package io.kvpager.protocol;

/**
 * Text that came from the bus, as it may be quoted in a message or a log line: a sender can put
 * anything in a header or a field, and an 8 KB action name repeated in every warning buries the log.
 */
public final class WireText {

    /** The most characters of a sender's text that a message quotes. */
    public static final int MOST = 64;

    private WireText() {
    }

    /** {@code text} as a message quotes it: whole up to {@value #MOST} characters, cut past that with its length. */
    public static String cut(String text) {
        if (text == null || text.length() <= MOST) {
            return text;
        }
        return text.substring(0, MOST) + "…(" + text.length() + " chars)";
    }
}

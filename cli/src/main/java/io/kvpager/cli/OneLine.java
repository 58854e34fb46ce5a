package io.kvpager.cli;

/** Messages squeezed onto one line, for stderr and for logs read by line. */
final class OneLine {

    private OneLine() {
    }

    static String of(String message) {
        return message == null ? "" : message.strip().replaceAll("\\s*\\R\\s*", "; ");
    }

    /** The failure's own message, its cause's where it has none, and its type as a last resort. */
    static String of(Throwable failure) {
        Throwable t = failure;
        while (t.getMessage() == null && t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.getClass().getSimpleName() : of(t.getMessage());
    }
}

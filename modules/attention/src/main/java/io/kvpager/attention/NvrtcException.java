package io.kvpager.attention;

import java.util.List;

/** Source that NVRTC would not compile: its error, the options and NVRTC's log. */
public final class NvrtcException extends RuntimeException {

    private final String log;

    public NvrtcException(String name, String error, List<String> options, String log) {
        super("NVRTC could not compile " + name + ": " + error + " (options " + String.join(" ", options) + ")\n" + log);
        this.log = log;
    }

    /** NVRTC's compile log. */
    public String log() {
        return log;
    }
}

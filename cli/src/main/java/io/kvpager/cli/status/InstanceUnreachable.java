package io.kvpager.cli.status;

/** No coordinator answered for an instance: none is registered at its address, or it did not answer in time. */
public class InstanceUnreachable extends IllegalStateException {

    private final String instance;

    public InstanceUnreachable(String instance, String message) {
        super(message);
        this.instance = instance;
    }

    public String instance() {
        return instance;
    }
}

package io.kvpager.spi;

import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Opens {@link Device}s of one kind ({@code sim}, {@code cuda}); found through
 * {@link ServiceLoader}, so a worker names the kind in its config and needs no compile-time
 * dependency on the implementation.
 */
public interface DeviceFactory {

    /** The kind named in configs and on the command line: {@code sim} or {@code cuda}. */
    String kind();

    /** Why this kind cannot open a device on this machine, or empty when it can. */
    Optional<String> unavailableReason();

    /**
     * Opens GPU {@code gpu} for the rank named {@code rank} (e.g. {@code "pp0/tp1"}).
     *
     * @param options kind-specific settings (the sim device's capacity, latency model, faults);
     *     unknown keys are rejected with a message naming them
     * @throws IllegalArgumentException for bad options
     * @throws DeviceException when the driver refuses
     */
    Device open(int gpu, String rank, Map<String, Object> options);

    /** The factory for {@code kind}, or an error listing the kinds that are installed. */
    static DeviceFactory forKind(String kind) {
        StringBuilder known = new StringBuilder();
        for (DeviceFactory factory : ServiceLoader.load(DeviceFactory.class)) {
            if (factory.kind().equals(kind)) {
                return factory;
            }
            known.append(known.isEmpty() ? "" : ", ").append(factory.kind());
        }
        throw new IllegalArgumentException("no device kind '" + kind + "'; installed kinds: "
                + (known.isEmpty() ? "none" : known));
    }
}

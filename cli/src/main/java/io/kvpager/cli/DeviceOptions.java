package io.kvpager.cli;

import io.kvpager.internal.options.OptionRules;
import io.kvpager.spi.DeviceFactory;
import picocli.CommandLine.Option;

/** Which kind of device a rank runs on, and which GPU. */
final class DeviceOptions {

    @Option(names = "--device", paramLabel = "KIND", defaultValue = "sim",
            description = "sim (simulated H200 in host memory) or cuda (default: ${DEFAULT-VALUE}).")
    String kind;

    @Option(names = "--gpu", paramLabel = "N", defaultValue = "0", description = "GPU index (default: ${DEFAULT-VALUE}).")
    int gpu;

    /**
     * Fails fast when the kind is unknown or cannot open a device here (no driver, no GPU), saying why.
     *
     * @throws IllegalArgumentException with the reason
     */
    void validate() {
        OptionRules.atLeast("--gpu", gpu, 0);
        requireAvailable(kind);
    }

    static void requireAvailable(String kind) {
        DeviceFactory factory = DeviceFactory.forKind(OptionRules.deviceKind("--device", kind));
        factory.unavailableReason().ifPresent(reason -> {
            throw new IllegalArgumentException("--device " + kind + " cannot be used here: " + reason);
        });
    }
}

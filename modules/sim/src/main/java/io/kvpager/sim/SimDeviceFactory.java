package io.kvpager.sim;

import io.kvpager.spi.DeviceFactory;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code sim} device kind: opens a {@link SimDevice} on GPU {@code gpu} of the
 * {@link SimGpus} registry, with the options {@link SimOptions} reads. Always available.
 */
public final class SimDeviceFactory implements DeviceFactory {

    @Override
    public String kind() {
        return "sim";
    }

    @Override
    public Optional<String> unavailableReason() {
        return Optional.empty();
    }

    @Override
    public SimDevice open(int gpu, String rank, Map<String, Object> options) {
        return SimGpus.open(gpu, rank, SimOptions.parse(options));
    }

    /** The same as {@link #open(int, String, Map)} with options already read. */
    public SimDevice open(int gpu, String rank, SimOptions options) {
        return SimGpus.open(gpu, rank, options);
    }
}

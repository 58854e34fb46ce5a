package io.kvpager.cuda;

import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Devices of kind {@code cuda}: GPUs through {@code libcuda.so.1}. Found by
 * {@link java.util.ServiceLoader}; loading it touches no native code, so a machine without a
 * GPU can list it and read {@link #unavailableReason()}.
 */
public final class CudaDeviceFactory implements DeviceFactory {

    public static final String KIND = "cuda";

    @Override
    public String kind() {
        return KIND;
    }

    /**
     * {@code "libcuda.so.1 not found: ..."} or {@code "no CUDA device: ..."} when this process
     * cannot open a CUDA device; empty when it can. Asked once per process ({@code cuInit}).
     */
    @Override
    public Optional<String> unavailableReason() {
        return CudaDriver.unavailableReason();
    }

    /**
     * Opens GPU {@code gpu} for {@code rank}. The cuda device takes no options.
     *
     * @throws IllegalArgumentException for a negative ordinal, an ordinal the driver does not
     *     have, a blank rank or any option
     * @throws IllegalStateException with {@link #unavailableReason()} as its message when this
     *     machine has no usable driver or device (the driver's error as its cause, if any)
     * @throws io.kvpager.spi.DeviceException when the driver refuses the device
     */
    @Override
    public Device open(int gpu, String rank, Map<String, Object> options) {
        Objects.requireNonNull(options, "options");
        if (!options.isEmpty()) {
            throw new IllegalArgumentException("unknown cuda device option(s) " + new TreeSet<>(options.keySet())
                    + ": the cuda device takes none");
        }
        if (gpu < 0) {
            throw new IllegalArgumentException("gpu must be a device ordinal (0 or more), got " + gpu);
        }
        if (rank == null || rank.isBlank()) {
            throw new IllegalArgumentException("rank must name the rank, e.g. \"pp0/tp1\"");
        }
        Optional<String> reason = unavailableReason();
        if (reason.isPresent()) {
            throw new IllegalStateException(reason.get(), CudaDriver.unavailableCause().orElse(null));
        }
        return CudaDevice.open(gpu, rank);
    }
}

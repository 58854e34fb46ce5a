package io.kvpager.sim;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The driver calls a {@link FaultPlan} and a {@link LatencyModel} can aim at, by their short
 * names ({@code map}) and the driver's own ({@code cuMemMap}).
 */
public enum DriverCall {
    RESERVE("reserve", "cuMemAddressReserve"),
    FREE("free", "cuMemAddressFree"),
    CREATE("create", "cuMemCreate"),
    RELEASE("release", "cuMemRelease"),
    MAP("map", "cuMemMap"),
    ACCESS("access", "cuMemSetAccess"),
    UNMAP("unmap", "cuMemUnmap"),
    SYNCHRONIZE("synchronize", "cuCtxSynchronize");

    private final String shortName;
    private final String driverName;

    DriverCall(String shortName, String driverName) {
        this.shortName = shortName;
        this.driverName = driverName;
    }

    /** The name used in fault plans: {@code map}. */
    public String shortName() {
        return shortName;
    }

    /** The CUDA driver function: {@code cuMemMap}; also the {@code call} of a {@link io.kvpager.spi.DeviceException}. */
    public String driverName() {
        return driverName;
    }

    /** Whether the call acts on an address inside a reserved range, so that a fault may name a page. */
    public boolean takesPage() {
        return this == MAP || this == ACCESS || this == UNMAP;
    }

    /** The call named {@code name}, short or driver spelling, case-insensitive. */
    public static Optional<DriverCall> named(String name) {
        for (DriverCall call : values()) {
            if (call.shortName.equalsIgnoreCase(name) || call.driverName.equalsIgnoreCase(name)) {
                return Optional.of(call);
            }
        }
        return Optional.empty();
    }

    /** Every accepted name, for error messages. */
    public static String acceptedNames() {
        return Arrays.stream(values())
                .map(c -> c.shortName + " (" + c.driverName + ")")
                .collect(Collectors.joining(", "));
    }

    @Override
    public String toString() {
        return shortName.toLowerCase(Locale.ROOT);
    }
}

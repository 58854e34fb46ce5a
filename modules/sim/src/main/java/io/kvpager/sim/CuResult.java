package io.kvpager.sim;

import java.util.Map;
import java.util.regex.Pattern;

/**
 * The driver's {@code CUresult} numbers for the error names the simulator raises or a fault plan
 * may ask for, so that a simulated failure carries the same number a real one would.
 */
public final class CuResult {

    /** Names a fault plan may use: any name of the driver's form. */
    private static final Pattern ERROR_NAME = Pattern.compile("CUDA_ERROR_[A-Z_]+");

    /** The number for a well-formed name the table does not know. */
    public static final int UNKNOWN = 999;

    private static final Map<String, Integer> VALUES = Map.ofEntries(
            Map.entry("CUDA_ERROR_INVALID_VALUE", 1),
            Map.entry("CUDA_ERROR_OUT_OF_MEMORY", 2),
            Map.entry("CUDA_ERROR_NOT_INITIALIZED", 3),
            Map.entry("CUDA_ERROR_DEINITIALIZED", 4),
            Map.entry("CUDA_ERROR_NO_DEVICE", 100),
            Map.entry("CUDA_ERROR_INVALID_DEVICE", 101),
            Map.entry("CUDA_ERROR_INVALID_CONTEXT", 201),
            Map.entry("CUDA_ERROR_MAP_FAILED", 205),
            Map.entry("CUDA_ERROR_UNMAP_FAILED", 206),
            Map.entry("CUDA_ERROR_ALREADY_MAPPED", 208),
            Map.entry("CUDA_ERROR_NOT_MAPPED", 211),
            Map.entry("CUDA_ERROR_ECC_UNCORRECTABLE", 214),
            Map.entry("CUDA_ERROR_INVALID_HANDLE", 400),
            Map.entry("CUDA_ERROR_ILLEGAL_STATE", 401),
            Map.entry("CUDA_ERROR_NOT_FOUND", 500),
            Map.entry("CUDA_ERROR_NOT_READY", 600),
            Map.entry("CUDA_ERROR_ILLEGAL_ADDRESS", 700),
            Map.entry("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701),
            Map.entry("CUDA_ERROR_LAUNCH_TIMEOUT", 702),
            Map.entry("CUDA_ERROR_CONTEXT_IS_DESTROYED", 709),
            Map.entry("CUDA_ERROR_LAUNCH_FAILED", 719),
            Map.entry("CUDA_ERROR_NOT_PERMITTED", 800),
            Map.entry("CUDA_ERROR_NOT_SUPPORTED", 801),
            Map.entry("CUDA_ERROR_SYSTEM_NOT_READY", 802),
            Map.entry("CUDA_ERROR_TIMEOUT", 909),
            Map.entry("CUDA_ERROR_UNKNOWN", UNKNOWN));

    /** {@code CUDA_ERROR_INVALID_CONTEXT}: a call from a thread the device was not attached to. */
    public static final String INVALID_CONTEXT = "CUDA_ERROR_INVALID_CONTEXT";

    private CuResult() {
    }

    /** Whether {@code name} has the driver's form {@code CUDA_ERROR_[A-Z_]+}. */
    public static boolean isErrorName(String name) {
        return name != null && ERROR_NAME.matcher(name).matches();
    }

    /** The driver's number for {@code errorName}; {@value #UNKNOWN} for a name the table does not know. */
    public static int valueOf(String errorName) {
        return VALUES.getOrDefault(errorName, UNKNOWN);
    }
}

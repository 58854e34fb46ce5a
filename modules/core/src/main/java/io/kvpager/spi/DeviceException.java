package io.kvpager.spi;

/**
 * A failed driver call: which call ({@code cuMemMap}), the driver's error name
 * ({@code CUDA_ERROR_OUT_OF_MEMORY}) and its numeric result. Nothing outside a {@link Device}
 * sees a raw status code.
 */
public class DeviceException extends RuntimeException {

    /** {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    public static final String OUT_OF_MEMORY = "CUDA_ERROR_OUT_OF_MEMORY";
    /** {@code CUDA_ERROR_INVALID_VALUE}. */
    public static final String INVALID_VALUE = "CUDA_ERROR_INVALID_VALUE";
    /** {@code CUDA_ERROR_NOT_SUPPORTED}. */
    public static final String NOT_SUPPORTED = "CUDA_ERROR_NOT_SUPPORTED";
    /** {@code CUDA_ERROR_ILLEGAL_ADDRESS}. */
    public static final String ILLEGAL_ADDRESS = "CUDA_ERROR_ILLEGAL_ADDRESS";
    /** {@code CUDA_ERROR_NOT_INITIALIZED}: the device is closed or was never set up. */
    public static final String NOT_INITIALIZED = "CUDA_ERROR_NOT_INITIALIZED";
    /** {@code CUDA_ERROR_UNKNOWN}. */
    public static final String UNKNOWN = "CUDA_ERROR_UNKNOWN";

    private final String call;
    private final String errorName;
    private final int result;

    public DeviceException(String call, String errorName, int result, String detail) {
        super(call + " failed: " + errorName + (detail == null || detail.isEmpty() ? "" : " (" + detail + ")"));
        this.call = call;
        this.errorName = errorName;
        this.result = result;
    }

    /** The driver function that failed, e.g. {@code cuMemMap}. */
    public String call() {
        return call;
    }

    /** The driver's own error name, e.g. {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    public String errorName() {
        return errorName;
    }

    /** The driver's numeric {@code CUresult}. */
    public int result() {
        return result;
    }

    public boolean isOutOfMemory() {
        return OUT_OF_MEMORY.equals(errorName);
    }
}

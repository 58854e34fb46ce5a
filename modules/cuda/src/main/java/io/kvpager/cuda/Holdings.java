package io.kvpager.cuda;

import io.kvpager.spi.DeviceException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * What one {@link CudaDevice} holds from the driver right now: reserved ranges, live physical
 * handles and mappings. It is what {@code close()} gives back, and it refuses, before the driver
 * is called, the requests that would corrupt it or the context: a handle this device never
 * created (the driver takes handles as raw pointers), unmapping or freeing something that is not
 * there, or copying to memory that is not mapped with access (a fault there would poison the
 * context for every later call). Such refusals are {@link DeviceException}s with the error name
 * the driver uses for the case and a detail that says no driver call was made.
 *
 * <p>Confined to the device's thread, like the device.
 */
final class Holdings {

    /** One {@code cuMemMap} call's range; {@code accessible} once {@code cuMemSetAccess} covered it. */
    record Mapping(long address, long size, long handle, boolean accessible) {
        long end() {
            return address + size;
        }
    }

    private final Map<Long, Long> reservations = new LinkedHashMap<>();
    private final Map<Long, Long> handles = new LinkedHashMap<>();
    private final NavigableMap<Long, Mapping> mappings = new TreeMap<>();

    // --- reservations ------------------------------------------------------------------------

    void reserved(long address, long size) {
        reservations.put(address, size);
    }

    /** Refuses to free a range that is not one whole reservation, or that still has mappings. */
    void checkFree(long address, long size) {
        Long reservedSize = reservations.get(address);
        if (reservedSize == null) {
            throw refused("cuMemAddressFree", DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    "no reservation starts at 0x" + Long.toHexString(address));
        }
        if (reservedSize != size) {
            throw refused("cuMemAddressFree", DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    "the reservation at 0x" + Long.toHexString(address) + " is " + reservedSize + " bytes, not " + size);
        }
        Map.Entry<Long, Mapping> inside = mappings.ceilingEntry(address);
        if (inside != null && inside.getKey() < address + size) {
            int count = mappings.subMap(address, true, address + size, false).size();
            throw refused("cuMemAddressFree", DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    count + " mapping(s) still inside " + CudaDriver.range(address, size) + ", the first at 0x"
                            + Long.toHexString(inside.getKey()) + "; unmap them first");
        }
    }

    void freed(long address) {
        reservations.remove(address);
    }

    // --- handles -----------------------------------------------------------------------------

    void created(long handle, long size) {
        handles.put(handle, size);
    }

    /** Refuses a handle this device did not create or has already released. */
    void checkLive(String call, long handle) {
        if (!handles.containsKey(handle)) {
            throw refused(call, DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    "handle 0x" + Long.toHexString(handle) + " is not a live handle of this device");
        }
    }

    void released(long handle) {
        handles.remove(handle);
    }

    // --- mappings ----------------------------------------------------------------------------

    void mapped(long address, long size, long handle) {
        mappings.put(address, new Mapping(address, size, handle, false));
    }

    /** Refuses an unmap that is not exactly one earlier map call's range. */
    void checkUnmap(long address, long size) {
        Mapping mapping = mappings.get(address);
        if (mapping == null) {
            throw refused("cuMemUnmap", DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    "nothing is mapped at 0x" + Long.toHexString(address));
        }
        if (mapping.size() != size) {
            throw refused("cuMemUnmap", DeviceException.INVALID_VALUE, CudaDriver.CUDA_ERROR_INVALID_VALUE,
                    "the mapping at 0x" + Long.toHexString(address) + " is " + mapping.size() + " bytes, not " + size);
        }
    }

    void unmapped(long address) {
        mappings.remove(address);
    }

    /** Marks every mapping that lies wholly inside the range as accessible. */
    void accessGranted(long address, long size) {
        long end = address + size;
        for (Map.Entry<Long, Mapping> e : mappings.subMap(address, true, end, false).entrySet()) {
            Mapping m = e.getValue();
            if (m.end() <= end && !m.accessible()) {
                e.setValue(new Mapping(m.address(), m.size(), m.handle(), true));
            }
        }
    }

    /**
     * Refuses a copy or fill unless {@code [address, address + length)} is covered by adjacent
     * mappings that all have access.
     */
    void checkAccessible(String call, long address, long length) {
        long at = address;
        long end = address + length;
        while (at < end) {
            Map.Entry<Long, Mapping> e = mappings.floorEntry(at);
            if (e == null || e.getValue().end() <= at) {
                throw refused(call, DeviceException.ILLEGAL_ADDRESS, CudaDriver.CUDA_ERROR_ILLEGAL_ADDRESS,
                        "0x" + Long.toHexString(at) + " is not mapped (" + CudaDriver.range(address, length) + ")");
            }
            if (!e.getValue().accessible()) {
                throw refused(call, DeviceException.ILLEGAL_ADDRESS, CudaDriver.CUDA_ERROR_ILLEGAL_ADDRESS,
                        "0x" + Long.toHexString(at) + " is mapped but cuMemSetAccess was not called on it");
            }
            at = e.getValue().end();
        }
    }

    // --- what is left ------------------------------------------------------------------------

    /** How many of each this device holds. */
    record Counts(int reservations, int handles, int mappings) {
    }

    Counts counts() {
        return new Counts(reservations.size(), handles.size(), mappings.size());
    }

    /** Live mappings, in address order. */
    List<Mapping> mappings() {
        return new ArrayList<>(mappings.values());
    }

    /** Live handles and their sizes, oldest first. */
    Map<Long, Long> handles() {
        return new LinkedHashMap<>(handles);
    }

    /** Reservations and their sizes, oldest first. */
    Map<Long, Long> reservations() {
        return new LinkedHashMap<>(reservations);
    }

    /** Forgets everything, after close has given it back (or tried to). */
    void clear() {
        reservations.clear();
        handles.clear();
        mappings.clear();
    }

    private static DeviceException refused(String call, String errorName, int result, String detail) {
        return new DeviceException(call, errorName, result, detail + "; refused before calling the driver");
    }
}

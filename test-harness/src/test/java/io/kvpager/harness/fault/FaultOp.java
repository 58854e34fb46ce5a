package io.kvpager.harness.fault;

import io.kvpager.sim.DriverCall;

/**
 * The driver call a fault aims at, and which caller meets it: the calls of a map batch
 * ({@code cuMemCreate}, {@code cuMemMap}, {@code cuMemSetAccess}, and the {@code cuCtxSynchronize}
 * that ends the batch) fail an allocation that must map; those of an unmap batch
 * ({@code cuMemUnmap}, and {@code cuMemRelease} of a handle the rank's pool does not keep) fail
 * the trim that unmaps.
 */
enum FaultOp {
    CREATE(DriverCall.CREATE, true),
    MAP(DriverCall.MAP, true),
    SET_ACCESS(DriverCall.ACCESS, true),
    UNMAP(DriverCall.UNMAP, false),
    RELEASE(DriverCall.RELEASE, false),
    SYNCHRONIZE(DriverCall.SYNCHRONIZE, true);

    private final DriverCall call;
    private final boolean mapSide;

    FaultOp(DriverCall call, boolean mapSide) {
        this.call = call;
        this.mapSide = mapSide;
    }

    DriverCall call() {
        return call;
    }

    /** Whether the fault is met by an allocation's map batch, else by a trim's unmap batch. */
    boolean mapSide() {
        return mapSide;
    }

    /** The worker action whose batch makes this call: {@code map} or {@code unmap}. */
    String action() {
        return mapSide ? "map" : "unmap";
    }

    /** Whether the rank makes this call once per handle of every page, else once per batch. */
    boolean perPage() {
        return this != SYNCHRONIZE;
    }

    /** Whether the sim can aim a fault at a page id for this call; the others are aimed by call count. */
    boolean pageMatchable() {
        return call.takesPage();
    }
}

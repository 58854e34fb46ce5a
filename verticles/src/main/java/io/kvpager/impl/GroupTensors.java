package io.kvpager.impl;

import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.spi.Device;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * One group's tensors on one rank: the virtual ranges reserved once, the physical handles behind
 * each mapped page id, and the optional zero page that backs every page id not mapped.
 *
 * <p>{@link #map} and {@link #unmap} are all-or-nothing on this rank: every device step records
 * its compensation in an {@link UndoLog}, and a failure at page k undoes the steps before it
 * before the failure is thrown. Validation (range, duplicates, state conflicts) happens for the
 * whole batch before the first device call, so a refused request changes nothing.
 *
 * <p>Confined to the rank's thread, like its {@link Device}.
 */
final class GroupTensors {

    private static final Logger LOG = LoggerFactory.getLogger(GroupTensors.class);

    private final Device device;
    private final int group;
    private final Geometry geometry;
    private final boolean zeroPage;
    private final TensorRanges ranges;
    /** Null for a page in the idle state. */
    private final PageHandles[] pages;
    /** Handles whose pages were unmapped but whose release failed; retried on every unmap and on destroy. */
    private final List<Long> unreleased = new ArrayList<>();
    private long zeroHandle;
    private boolean zeroAlive;
    private boolean destroying;

    private GroupTensors(Device device, int group, Geometry geometry, boolean zeroPage, TensorRanges ranges) {
        this.device = device;
        this.group = group;
        this.geometry = geometry;
        this.zeroPage = zeroPage;
        this.ranges = ranges;
        this.pages = new PageHandles[geometry.pages()];
    }

    /**
     * Reserves the group's virtual ranges and, with {@code zeroPage}, creates one zero-filled
     * handle and maps it into every slot of every page id. All or nothing.
     *
     * @throws RankFailure 400 when the geometry does not suit the device, 507/500 when the driver refuses
     */
    static GroupTensors create(Device device, int group, Geometry geometry, boolean zeroPage) {
        geometry.requireGranularity(device.granularity());
        UndoLog undo = new UndoLog();
        try {
            GroupTensors tensors = new GroupTensors(device, group, geometry, zeroPage, TensorRanges.reserve(device, geometry, undo));
            if (zeroPage) {
                tensors.mapZeroEverywhere(undo);
            }
            return tensors;
        } catch (RuntimeException e) {
            UndoLog.Outcome outcome = undo.rollback();
            throw RankFailure.at(RankFailure.NO_PAGE, e, outcome.note());
        }
    }

    private void mapZeroEverywhere(UndoLog undo) {
        long bytes = ranges.slotBytes();
        int p = RankFailure.NO_PAGE;
        try {
            long handle = device.create(bytes);
            undo.push("release the zero page", () -> device.release(handle));
            zeroHandle = handle;
            zeroAlive = true;
            for (p = 0; p < geometry.pages(); p++) {
                undo.page(p);
                for (int s = 0; s < ranges.slots(); s++) {
                    long address = ranges.slotAddress(p, s);
                    device.map(address, bytes, handle);
                    undo.push("unmap the zero page", () -> device.unmap(address, bytes));
                    device.setAccess(address, bytes);
                    if (p == 0 && s == 0) {
                        // cuMemCreate does not clear memory; every slot shares this one handle
                        device.fill(address, bytes, (byte) 0);
                    }
                }
            }
            p = RankFailure.NO_PAGE;
            device.synchronize();
        } catch (RuntimeException e) {
            throw RankFailure.at(p, new RankFailure(RankFailure.of(e).code(), "zero page: " + e.getMessage()), "");
        }
    }

    Geometry geometry() {
        return geometry;
    }

    boolean zeroPage() {
        return zeroPage;
    }

    /** Whether this group was made from the same request: same geometry, same zero-page choice. */
    boolean sameAs(Geometry other, boolean otherZeroPage) {
        return geometry.equals(other) && zeroPage == otherZeroPage;
    }

    /** Whether page {@code page} is mapped (every slot holds a real handle). */
    boolean mapped(int page) {
        return pages[page] != null && pages[page].mapped();
    }

    /**
     * Maps every page id in {@code ids}: per page, a fresh handle per slot, mapped (in place of
     * the zero page, when there is one) and made accessible; the device is synchronized
     * afterwards so the pages are usable once the reply is sent.
     *
     * @throws RankFailure 409 naming the first page already mapped (nothing changes), or the
     *     driver's failure naming the first page that failed, after the batch was undone
     */
    void map(int[] ids) {
        requireUsable();
        List<Integer> conflicts = new ArrayList<>();
        List<Integer> damaged = new ArrayList<>();
        for (int p : ids) {
            if (pages[p] != null) {
                (pages[p].mapped() ? conflicts : damaged).add(p);
            }
        }
        if (!conflicts.isEmpty()) {
            throw new RankFailure(FailureCode.CONFLICT, conflicts.getFirst(), "already mapped"
                    + (conflicts.size() > 1 ? " (so are pages " + conflicts.subList(1, conflicts.size()) + ")" : ""));
        }
        if (!damaged.isEmpty()) {
            throw new RankFailure(FailureCode.CONFLICT, damaged.getFirst(),
                    "left partly mapped by an earlier failure; unmap it before mapping it again");
        }
        if (ids.length == 0) {
            return;
        }
        if (zeroPage) {
            // a kernel may still be reading the zero page at these slots
            device.synchronize();
        }
        UndoLog undo = new UndoLog();
        int current = RankFailure.NO_PAGE;
        try {
            for (int p : ids) {
                current = p;
                undo.page(p);
                mapPage(p, undo);
            }
            current = RankFailure.NO_PAGE;
            device.synchronize();
        } catch (RuntimeException e) {
            UndoLog.Outcome outcome = undo.rollback();
            synchronizeQuietly();
            settle(ids);
            throw RankFailure.at(current, e, outcome.note());
        }
    }

    private void mapPage(int p, UndoLog undo) {
        PageHandles page = touch(p);
        long bytes = ranges.slotBytes();
        for (int s = 0; s < page.slots(); s++) {
            int slot = s;
            long address = ranges.slotAddress(p, s);
            if (page.zero(s)) {
                device.unmap(address, bytes);
                page.setZero(s, false);
                undo.push("map the zero page back", () -> mapZero(page, slot, address));
            }
            long handle = device.create(bytes);
            undo.push("release a new handle", () -> device.release(handle));
            device.map(address, bytes, handle);
            page.setReal(s, handle);
            undo.push("unmap a new handle", () -> {
                device.unmap(address, bytes);
                page.clearReal(slot);
            });
            device.setAccess(address, bytes);
        }
    }

    /**
     * Unmaps every page id in {@code ids} and releases its handles, putting the zero page back
     * when there is one. The device is synchronized first, so no kernel still reads them.
     *
     * @throws RankFailure 409 naming the first page not mapped (nothing changes), or the driver's
     *     failure naming the first page that failed, after the pages undone so far were mapped
     *     back with their own handles (their contents intact)
     */
    void unmap(int[] ids) {
        requireUsable();
        List<Integer> absent = new ArrayList<>();
        for (int p : ids) {
            if (pages[p] == null) {
                absent.add(p);
            }
        }
        if (!absent.isEmpty()) {
            throw new RankFailure(FailureCode.CONFLICT, absent.getFirst(), "not mapped"
                    + (absent.size() > 1 ? " (nor are pages " + absent.subList(1, absent.size()) + ")" : ""));
        }
        if (ids.length == 0) {
            return;
        }
        device.synchronize();
        UndoLog undo = new UndoLog();
        List<Long> detached = new ArrayList<>();
        long bytes = ranges.slotBytes();
        int current = RankFailure.NO_PAGE;
        try {
            for (int p : ids) {
                current = p;
                undo.page(p);
                PageHandles page = pages[p];
                for (int s = 0; s < page.slots(); s++) {
                    if (!page.real(s)) {
                        continue;
                    }
                    int slot = s;
                    long address = ranges.slotAddress(p, s);
                    Long handle = page.handle(s);
                    device.unmap(address, bytes);
                    page.clearReal(s);
                    detached.add(handle);
                    undo.push("map its handle back", () -> {
                        device.map(address, bytes, handle);
                        page.setReal(slot, handle);
                        detached.remove(handle);
                        device.setAccess(address, bytes);
                    });
                }
            }
            if (zeroPage) {
                for (int p : ids) {
                    current = p;
                    undo.page(p);
                    PageHandles page = pages[p];
                    for (int s = 0; s < page.slots(); s++) {
                        if (!page.zero(s)) {
                            int slot = s;
                            long address = ranges.slotAddress(p, s);
                            device.map(address, bytes, zeroHandle);
                            page.setZero(s, true);
                            undo.push("unmap the zero page", () -> {
                                device.unmap(address, bytes);
                                page.setZero(slot, false);
                            });
                            device.setAccess(address, bytes);
                        }
                    }
                }
            }
        } catch (RuntimeException e) {
            UndoLog.Outcome outcome = undo.rollback();
            synchronizeQuietly();
            // handles that could not be mapped back are of no use to their pages any more
            releaseAll(detached, current);
            settle(ids);
            throw RankFailure.at(current, e, outcome.note());
        }
        releaseAll(detached, RankFailure.NO_PAGE);
        settle(ids);
        try {
            retryUnreleased();
        } catch (RuntimeException e) {
            LOG.warn("group {}: releasing {} earlier unmapped handles failed again: {}", group, unreleased.size(), e.getMessage());
        }
    }

    /** Maps the zero page at one slot; the slot counts as backed by it once the map succeeded. */
    private void mapZero(PageHandles page, int slot, long address) {
        long bytes = ranges.slotBytes();
        device.map(address, bytes, zeroHandle);
        page.setZero(slot, true);
        device.setAccess(address, bytes);
    }

    /**
     * Releases handles no longer mapped. A release that fails leaves the mapping state as asked
     * (the page is unmapped), so it does not fail the request: the handle is kept, logged and
     * retried later, and {@link #stats()} counts it.
     */
    private void releaseAll(List<Long> handles, int page) {
        for (long handle : handles) {
            try {
                device.release(handle);
            } catch (RuntimeException e) {
                unreleased.add(handle);
                LOG.warn("group {}{}: releasing an unmapped handle failed, will retry: {}", group,
                        page == RankFailure.NO_PAGE ? "" : " page " + page, e.getMessage());
            }
        }
        handles.clear();
    }

    /** Releases the handles kept from failed releases; stops at the first that fails again. */
    private void retryUnreleased() {
        for (int i = unreleased.size() - 1; i >= 0; i--) {
            device.release(unreleased.get(i));
            unreleased.remove(i);
        }
    }

    /**
     * Unmaps and releases everything, the zero page too, and frees the virtual ranges. Each step
     * is recorded as it succeeds, so after a failure a second call carries on where this one
     * stopped; until then, the group takes no map or unmap.
     *
     * @throws RankFailure the driver's failure, naming the page it happened at
     */
    void destroy() {
        device.synchronize();
        destroying = true;
        long bytes = ranges.slotBytes();
        for (int p = 0; p < geometry.pages(); p++) {
            PageHandles page = pages[p];
            boolean idleOnZero = page == null && zeroPage && zeroAlive;
            if (page == null && !idleOnZero) {
                continue;
            }
            try {
                if (page == null) {
                    page = touch(p);
                }
                for (int s = 0; s < page.slots(); s++) {
                    long address = ranges.slotAddress(p, s);
                    if (page.real(s)) {
                        long handle = page.handle(s);
                        device.unmap(address, bytes);
                        page.clearReal(s);
                        // released with the others below, so a failed release is retried by the next destroy
                        unreleased.add(handle);
                    }
                    if (page.zero(s)) {
                        device.unmap(address, bytes);
                        page.setZero(s, false);
                    }
                }
            } catch (RuntimeException e) {
                throw RankFailure.at(p, e, "destroy-tensors again to finish");
            }
        }
        try {
            retryUnreleased();
            if (zeroAlive) {
                device.release(zeroHandle);
                zeroAlive = false;
            }
            ranges.free(device);
        } catch (RuntimeException e) {
            throw RankFailure.at(RankFailure.NO_PAGE, e, "destroy-tensors again to finish");
        }
    }

    /** One view per (layer, buffer). */
    List<TensorView> views() {
        return ranges.views();
    }

    /** Mapped page ids. */
    int mappedPages() {
        int count = 0;
        for (PageHandles page : pages) {
            count += page != null && page.mapped() ? 1 : 0;
        }
        return count;
    }

    /** Live physical handles this group holds: mapped ones, the zero page, and those awaiting release. */
    int handles() {
        int count = unreleased.size() + (zeroAlive ? 1 : 0);
        for (PageHandles page : pages) {
            count += page == null ? 0 : page.realCount();
        }
        return count;
    }

    /** This group's line in the {@code stats} reply. */
    JsonObject stats() {
        JsonArray partlyMapped = new JsonArray();
        for (int p = 0; p < pages.length; p++) {
            if (pages[p] != null && !pages[p].mapped() && pages[p].realCount() > 0) {
                partlyMapped.add(p);
            }
        }
        return new JsonObject()
                .put("mappedPages", mappedPages())
                .put("handles", handles())
                .put("layout", geometry.layout().name())
                .put("pages", geometry.pages())
                .put("zeroPage", zeroPage)
                .put("partlyMappedPages", partlyMapped)
                .put("unreleasedHandles", unreleased.size());
    }

    private void requireUsable() {
        if (destroying) {
            throw new RankFailure(FailureCode.CONFLICT, "tensors are being destroyed; send destroy-tensors again to finish");
        }
    }

    private PageHandles touch(int p) {
        if (pages[p] == null) {
            pages[p] = new PageHandles(ranges.slots(), zeroPage);
        }
        return pages[p];
    }

    /** Forgets the records of pages back in the idle state. */
    private void settle(int[] ids) {
        for (int p : ids) {
            if (pages[p] != null && pages[p].idle(zeroPage)) {
                pages[p] = null;
            }
        }
    }

    private void synchronizeQuietly() {
        try {
            device.synchronize();
        } catch (RuntimeException e) {
            LOG.warn("group {}: synchronize after a rollback failed: {}", group, e.getMessage());
        }
    }
}

package io.kvpager.device;

import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.spi.Device;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;

/**
 * One group's tensors on one device: the virtual ranges reserved once, the physical handles behind
 * each mapped page id, and the optional zero page that backs every page id not mapped. This is
 * what maps and unmaps a pool's page ids on a rank worker's GPU, and, through
 * {@link io.kvpager.device.LocalPageMapper}, on a single device in tests and benchmarks. Handles
 * come from the rank's {@link RankHandlePool} and go back to it when their page is unmapped; the
 * group joins the pool with its {@link HandlePoolOptions} when created and leaves it when destroyed.
 *
 * <p>{@link #map} and {@link #unmap} are all-or-nothing on this rank: every device step records
 * its compensation in an {@link UndoLog}, and a failure at page k undoes the steps before it
 * before the failure is thrown, which says whether that undo was complete
 * ({@link RankException#rollbackComplete()}). Validation (range, duplicates, state conflicts)
 * happens for the whole batch before the first device call, so a refused request changes nothing.
 *
 * <p>Confined to the device's thread, like the {@link Device}.
 */
public final class GroupTensors {

    private static final Logger LOG = LoggerFactory.getLogger(GroupTensors.class);

    private final Device device;
    private final RankHandlePool handles;
    private final int group;
    private final Geometry geometry;
    private final boolean zeroPage;
    private final HandlePoolOptions poolOptions;
    private final TensorRanges ranges;
    /** Null for a page in the idle state. */
    private final PageHandles[] pages;
    /**
     * Handles whose pages were unmapped but that could not go back to the pool (the pool released
     * them, and the release failed); given back again on every unmap and on destroy.
     */
    private final List<Long> unreleased = new ArrayList<>();
    private long zeroHandle;
    private boolean zeroAlive;
    private boolean destroying;
    private boolean inPool;
    /** Page ids' worth of idle handles kept for this group on top of its pool options' bound, as its coordinator asks. */
    private int idlePages;

    private GroupTensors(Device device, RankHandlePool handles, int group, Geometry geometry, boolean zeroPage,
                         HandlePoolOptions poolOptions, TensorRanges ranges) {
        this.device = device;
        this.handles = handles;
        this.group = group;
        this.geometry = geometry;
        this.zeroPage = zeroPage;
        this.poolOptions = poolOptions;
        this.ranges = ranges;
        this.pages = new PageHandles[geometry.pages()];
    }

    /**
     * Reserves the group's virtual ranges, with {@code zeroPage} creates one zero-filled handle
     * and maps it into every slot of every page id, then joins the rank's handle pool (creating
     * the prefilled handles). All or nothing.
     *
     * @throws IllegalArgumentException (a 400) when the geometry does not suit the device or the
     *     pool options the geometry, before any device call
     * @throws RankException 507/500 when the driver refuses, after what was done is undone
     */
    public static GroupTensors create(Device device, RankHandlePool handles, int group, Geometry geometry, boolean zeroPage,
                                      HandlePoolOptions poolOptions) {
        geometry.requireGranularity(device.granularity());
        poolOptions.requireFits(geometry);
        UndoLog undo = new UndoLog();
        try {
            GroupTensors tensors = new GroupTensors(device, handles, group, geometry, zeroPage, poolOptions,
                    TensorRanges.reserve(device, geometry, undo));
            if (zeroPage) {
                tensors.mapZeroEverywhere(undo);
            }
            tensors.joinPool();
            return tensors;
        } catch (RuntimeException e) {
            throw RankException.at(RankException.NO_PAGE, e, undo.rollback());
        }
    }

    private void mapZeroEverywhere(UndoLog undo) {
        long bytes = ranges.slotBytes();
        int p = RankException.NO_PAGE;
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
            p = RankException.NO_PAGE;
            device.synchronize();
        } catch (RuntimeException e) {
            throw RankException.at(p, new RankException(RankException.of(e).code(), "zero page: " + e.getMessage()), "");
        }
    }

    /** Last step of {@link #create}: the pool undoes its own part when it fails. */
    private void joinPool() {
        try {
            handles.join(ranges.slotBytes(), poolOptions.boundHandles(geometry), poolOptions.prefillHandles(geometry));
        } catch (RuntimeException e) {
            throw new RankException(RankException.of(e).code(), "prefilling the handle pool: " + e.getMessage());
        }
        inPool = true;
    }

    public Geometry geometry() {
        return geometry;
    }

    /**
     * Device memory this group may hold besides its mapped pages: the zero page, and the idle
     * handles its pool bound lets the rank keep. A GPU's budget counts it from the start.
     */
    public long standingBytes() {
        return ((zeroPage ? 1L : 0L) + poolOptions.boundHandles(geometry)) * ranges.slotBytes();
    }

    public HandlePoolOptions poolOptions() {
        return poolOptions;
    }

    /**
     * Sets how many page ids' worth of unmapped handles the rank keeps idle for this group on top
     * of its pool options' {@code boundPages}: the coordinator raises it while pages are unmapped
     * and mapped again, after it has counted that memory in the GPU's budget, and lowers it when
     * the churn stops. Lowering releases the idle handles above the rank's new bound at once.
     *
     * @throws IllegalArgumentException (a 400) for a count below 0 or above the pages the pool
     *     options leave; nothing changes
     * @throws io.kvpager.spi.DeviceException when releasing a handle above the rank's bound failed
     *     (a lowering's, or one left by an earlier failure): the bound is set all the same, and the
     *     handle stays idle until a later call releases it
     */
    public void keepIdle(int pages) {
        requireUsable();
        int most = geometry.pages() - poolOptions.boundPages();
        if (pages < 0 || pages > most) {
            throw new IllegalArgumentException("idlePages must be 0 to " + most + " (the group's " + geometry.pages()
                    + " pages less its handlePool.boundPages " + poolOptions.boundPages() + "), got " + pages);
        }
        int before = idlePages;
        long added = (long) (pages - before) * geometry.handlesPerPageId();
        if (added > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("idlePages " + pages + " of " + geometry.handlesPerPageId()
                    + " handles each is more idle handles than a rank counts");
        }
        if (pages > before) {
            handles.join(ranges.slotBytes(), (int) added, 0);
            idlePages = pages;
        } else if (pages < before) {
            idlePages = pages;
            handles.leave(ranges.slotBytes(), (before - pages) * geometry.handlesPerPageId());
        }
        // also what an earlier lowering's failed release left above the bound: the answer confirms none is
        handles.trimToBound(ranges.slotBytes());
    }

    /** Page ids' worth of idle handles kept for this group on top of its pool options' bound ({@link #keepIdle}). */
    public int idlePages() {
        return idlePages;
    }

    public boolean zeroPage() {
        return zeroPage;
    }

    /** Whether this group was made from the same request: same geometry, zero-page choice and pool options. */
    public boolean sameAs(Geometry other, boolean otherZeroPage, HandlePoolOptions otherPoolOptions) {
        return geometry.equals(other) && zeroPage == otherZeroPage && poolOptions.equals(otherPoolOptions);
    }

    /** Whether page {@code page} is mapped (every slot holds a real handle). */
    public boolean mapped(int page) {
        return pages[page] != null && pages[page].mapped();
    }

    /**
     * Maps every page id in {@code ids}: per page, a handle per slot from the rank's pool (created
     * only when none is idle), mapped (in place of the zero page, when there is one) and made
     * accessible; the device is synchronized afterwards so the pages are usable once the reply is
     * sent.
     *
     * @throws RankException 409 naming the first page already mapped (nothing changes), or the
     *     driver's failure naming the first page that failed (507 when a create ran out of memory),
     *     after the batch was undone: handles taken from the pool are idle in it again, and those
     *     created for the batch are released, so the device holds what it held before
     */
    public void map(int[] ids) {
        requireUsable();
        requireIds(ids);
        List<Integer> conflicts = new ArrayList<>();
        List<Integer> damaged = new ArrayList<>();
        for (int p : ids) {
            if (pages[p] != null) {
                (pages[p].mapped() ? conflicts : damaged).add(p);
            }
        }
        if (!conflicts.isEmpty()) {
            throw new RankException(FailureCode.CONFLICT, conflicts.getFirst(), "already mapped"
                    + (conflicts.size() > 1 ? " (so are pages " + conflicts.subList(1, conflicts.size()) + ")" : ""));
        }
        if (!damaged.isEmpty()) {
            throw new RankException(FailureCode.CONFLICT, damaged.getFirst(),
                    "left partly mapped by an earlier failure; unmap it before mapping it again");
        }
        if (ids.length == 0) {
            return;
        }
        if (zeroPage) {
            // a kernel may still be reading the zero page at these slots
            device.synchronize();
        }
        long bytes = ranges.slotBytes();
        int idleBefore = handles.idle(bytes);
        UndoLog undo = new UndoLog();
        int current = RankException.NO_PAGE;
        try {
            for (int p : ids) {
                current = p;
                undo.page(p);
                mapPage(p, undo);
            }
            current = RankException.NO_PAGE;
            device.synchronize();
        } catch (RuntimeException e) {
            UndoLog.Outcome outcome = undo.rollback();
            synchronizeQuietly();
            settle(ids);
            trimQuietly(bytes, idleBefore);
            throw RankException.at(current, e, outcome);
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
            long handle = handles.take(bytes);
            undo.push("give a handle back", () -> giveBack(handle, p));
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
     * Unmaps every page id in {@code ids} and gives its handles back to the rank's pool (which
     * keeps them idle up to its bound and releases the rest), putting the zero page back when
     * there is one. The device is synchronized first, so no kernel still reads them.
     *
     * @throws RankException 409 naming the first page not mapped (nothing changes), or the driver's
     *     failure naming the first page that failed, after the pages undone so far were mapped
     *     back with their own handles (their contents intact)
     */
    public void unmap(int[] ids) {
        requireUsable();
        requireIds(ids);
        List<Integer> absent = new ArrayList<>();
        for (int p : ids) {
            if (pages[p] == null) {
                absent.add(p);
            }
        }
        if (!absent.isEmpty()) {
            throw new RankException(FailureCode.CONFLICT, absent.getFirst(), "not mapped"
                    + (absent.size() > 1 ? " (nor are pages " + absent.subList(1, absent.size()) + ")" : ""));
        }
        if (ids.length == 0) {
            return;
        }
        device.synchronize();
        UndoLog undo = new UndoLog();
        List<Long> detached = new ArrayList<>();
        long bytes = ranges.slotBytes();
        int current = RankException.NO_PAGE;
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
            giveBackAll(detached, current);
            settle(ids);
            throw RankException.at(current, e, outcome);
        }
        giveBackAll(detached, RankException.NO_PAGE);
        settle(ids);
        try {
            retryUnreleased();
        } catch (RuntimeException e) {
            LOG.warn("group {}: giving back {} earlier unmapped handles failed again: {}", group, unreleased.size(), e.getMessage());
        }
    }

    /**
     * Brings every page id in {@code ids} back to the idle state, whatever state a failure left it
     * in: each real handle is unmapped and given back, and the zero page, when there is one, fills
     * every slot again. Pages already idle are left alone. Not all or nothing, and need not be: each
     * step moves a page toward idle, so after a failure the same request finishes the job. This is
     * how the coordinator recovers pages it quarantined, whose state here it could not know.
     *
     * @return the pages that held physical memory here
     * @throws RankException the driver's failure, naming the page it happened at; the pages before it are idle
     */
    public int[] release(int[] ids) {
        requireUsable();
        requireIds(ids);
        int[] released = new int[ids.length];
        int n = 0;
        if (ids.length == 0) {
            return released;
        }
        // a kernel may still read them
        device.synchronize();
        long bytes = ranges.slotBytes();
        int current = RankException.NO_PAGE;
        try {
            for (int p : ids) {
                PageHandles page = pages[p];
                if (page == null) {
                    continue;
                }
                current = p;
                if (page.realCount() > 0) {
                    released[n++] = p;
                }
                for (int s = 0; s < page.slots(); s++) {
                    long address = ranges.slotAddress(p, s);
                    if (page.real(s)) {
                        long handle = page.handle(s);
                        device.unmap(address, bytes);
                        page.clearReal(s);
                        giveBack(handle, p);
                    }
                    if (zeroPage && !page.zero(s)) {
                        mapZero(page, s, address);
                    }
                }
                pages[p] = null;
            }
        } catch (RuntimeException e) {
            throw RankException.at(current, e, "release-pages again to finish");
        }
        try {
            retryUnreleased();
        } catch (RuntimeException e) {
            LOG.warn("group {}: giving back {} earlier unmapped handles failed again: {}", group, unreleased.size(), e.getMessage());
        }
        return Arrays.copyOf(released, n);
    }

    /** Maps the zero page at one slot; the slot counts as backed by it once the map succeeded. */
    private void mapZero(PageHandles page, int slot, long address) {
        long bytes = ranges.slotBytes();
        device.map(address, bytes, zeroHandle);
        page.setZero(slot, true);
        device.setAccess(address, bytes);
    }

    /** Gives back handles no longer mapped; see {@link #giveBack}. */
    private void giveBackAll(List<Long> detached, int page) {
        for (long handle : detached) {
            giveBack(handle, page);
        }
        detached.clear();
    }

    /**
     * Gives a handle no longer mapped back to the pool. When the pool releases it and the release
     * fails, the mapping state is still as asked (the page is unmapped), so the request does not
     * fail: the handle is kept, logged and given back again later, and {@link #unreleasedHandles()} counts it.
     */
    private void giveBack(long handle, int page) {
        try {
            handles.give(ranges.slotBytes(), handle);
        } catch (RuntimeException e) {
            unreleased.add(handle);
            LOG.warn("group {}{}: releasing an unmapped handle failed, will retry: {}", group,
                    page == RankException.NO_PAGE ? "" : " page " + page, e.getMessage());
        }
    }

    /** Gives back the handles kept from failed releases; stops at the first that fails again. */
    private void retryUnreleased() {
        for (int i = unreleased.size() - 1; i >= 0; i--) {
            handles.give(ranges.slotBytes(), unreleased.get(i));
            unreleased.remove(i);
        }
    }

    /** Releases the idle handles a failed batch created; one that will not go stays idle and is logged. */
    private void trimQuietly(long bytes, int keep) {
        try {
            handles.trim(bytes, keep);
        } catch (RuntimeException e) {
            LOG.warn("group {}: releasing the handles a failed map created failed: {}", group, e.getMessage());
        }
    }

    /**
     * Unmaps everything and gives the handles back, releases the zero page, frees the virtual
     * ranges and leaves the rank's handle pool, whose bound shrinks by this group's share and
     * releases the idle handles above it. Each step is recorded as it succeeds, so after a failure
     * a second call carries on where this one stopped; until then, the group takes no map or unmap.
     *
     * @throws RankException the driver's failure, naming the page it happened at
     */
    public void destroy() {
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
                        // given back with the others below, so a failed release is retried by the next destroy
                        unreleased.add(handle);
                    }
                    if (page.zero(s)) {
                        device.unmap(address, bytes);
                        page.setZero(s, false);
                    }
                }
            } catch (RuntimeException e) {
                throw RankException.at(p, e, "destroy-tensors again to finish");
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
            throw RankException.at(RankException.NO_PAGE, e, "destroy-tensors again to finish");
        }
        if (inPool) {
            inPool = false;
            try {
                handles.leave(ranges.slotBytes(), poolOptions.boundHandles(geometry) + idlePages * geometry.handlesPerPageId());
            } catch (RuntimeException e) {
                // the group is gone all the same; the pool still lists the handle and releases it later
                LOG.warn("group {}: releasing the idle handles above the rank's new bound failed: {}", group, e.getMessage());
            }
        }
    }

    /** Page ids that hold physical memory here: mapped, or partly mapped by an earlier failure. */
    public int heldPages() {
        int count = 0;
        for (PageHandles page : pages) {
            count += page != null && page.realCount() > 0 ? 1 : 0;
        }
        return count;
    }

    /** Bytes of the handles behind this group's pages, those awaiting release included; the zero page not. */
    public long heldBytes() {
        return (long) (handles() - (zeroAlive ? 1 : 0)) * ranges.slotBytes();
    }

    /** The base address of each virtual range: one for {@code PAGE_MAJOR}, one per tensor for {@code PER_LAYER}. */
    public long[] rangeBases() {
        return ranges.bases();
    }

    /** Where slot {@code slot} of page {@code page} is mapped: the page's handle in range {@code slot}. */
    public long address(int page, int slot) {
        return ranges.slotAddress(page, slot);
    }

    /** Mapped page ids. */
    public int mappedPages() {
        int count = 0;
        for (PageHandles page : pages) {
            count += page != null && page.mapped() ? 1 : 0;
        }
        return count;
    }

    /**
     * Live physical handles this group holds: mapped ones, the zero page, and those awaiting
     * release; idle handles in the rank's pool are not the group's.
     */
    public int handles() {
        int count = unreleased.size() + (zeroAlive ? 1 : 0);
        for (PageHandles page : pages) {
            count += page == null ? 0 : page.realCount();
        }
        return count;
    }

    /** Page ids left holding some of their handles by a failure whose undo failed too; unmap or release them. */
    public int[] partlyMappedPages() {
        int[] partly = new int[pages.length];
        int n = 0;
        for (int p = 0; p < pages.length; p++) {
            if (pages[p] != null && !pages[p].mapped() && pages[p].realCount() > 0) {
                partly[n++] = p;
            }
        }
        return Arrays.copyOf(partly, n);
    }

    /** Handles unmapped but not given back yet, because their release failed; given back again on every unmap. */
    public int unreleasedHandles() {
        return unreleased.size();
    }

    /** Refuses a page id outside the group, or one listed twice, before any device call. */
    private void requireIds(int[] ids) {
        if (ids == null) {
            throw new IllegalArgumentException("no page ids: a batch is an array of them, perhaps empty");
        }
        // most batches on the map path hold one page id: no set for them
        BitSet seen = ids.length > 1 ? new BitSet(pages.length) : null;
        for (int p : ids) {
            if (p < 0 || p >= pages.length) {
                throw new RankException(FailureCode.BAD_REQUEST, "page " + p + " is out of range 0.." + (pages.length - 1));
            }
            if (seen != null) {
                if (seen.get(p)) {
                    throw new RankException(FailureCode.BAD_REQUEST, p, "listed twice");
                }
                seen.set(p);
            }
        }
    }

    private void requireUsable() {
        if (destroying) {
            throw new RankException(FailureCode.CONFLICT, "tensors are being destroyed; send destroy-tensors again to finish");
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

package io.kvpager.core;

import io.kvpager.Allocation;
import io.kvpager.Geometry;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import java.util.BitSet;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The scheduler's ledger of one KV pool: which blocks are handed out, which pages are mapped and
 * why, and what may be unmapped when.
 *
 * <p>{@link #alloc} hands out blocks from partly used pages first (best fit), then from idle
 * mapped pages, and maps new pages through the {@link PageMapper} only when both run out. It is
 * all or nothing: it claims what it can synchronously, maps the rest in one batch, and on a failed
 * map gives everything back and answers with an {@link Allocation#miss}. An allocation that needs
 * no map is answered with a stage that is already complete, and costs its block array, its
 * {@link Allocation} and that stage.
 *
 * <p>Pages emptied by {@link #free} stay mapped: in the reserve while it is under its high mark and
 * the limit allows, else in the reclaimed list until {@link #releaseReclaimed} unmaps them. Either
 * way a page emptied while batch fences are open is unmapped only after they retire, because a
 * running batch may still read its blocks; it may be handed out again meanwhile.
 *
 * <p>Not thread-safe: one owner thread calls the ledger and completes its mapper's stages.
 */
public final class PageLedger {

    private static final MissReason[] REASONS = MissReason.values();

    private final Geometry geometry;
    private final PageMapper mapper;
    private final int blocksPerPage;
    private final BlockAllocator blocks;
    private final PagePool pool;
    private final BatchFences fences = new BatchFences();
    private final MemoryLimit limit;
    private final PageConsumption consumption;
    /** Blocks claimed by allocations waiting on a map: used, but not the caller's to free. */
    private final BitSet claimed = new BitSet();
    private int allocsInFlight;
    private int allocMapping;
    private int refillMapping;
    private long allocs;
    private long blocksAllocated;
    private long blocksFreed;
    private long maps;
    private long unmaps;
    private long mapCalls;
    private long unmapCalls;
    private final long[] misses = new long[REASONS.length];

    public PageLedger(Geometry geometry, PageMapper mapper, ReserveMarks marks) {
        if (geometry == null || mapper == null || marks == null) {
            throw new IllegalArgumentException("a ledger needs a geometry, a mapper and reserve marks, got "
                    + geometry + ", " + mapper + ", " + marks);
        }
        this.geometry = geometry;
        this.mapper = mapper;
        this.blocksPerPage = geometry.blocksPerPage();
        this.blocks = new BlockAllocator(geometry.pages(), blocksPerPage);
        this.pool = new PagePool(geometry.pages());
        this.limit = new MemoryLimit(geometry);
        this.consumption = new PageConsumption(marks);
    }

    public Geometry geometry() {
        return geometry;
    }

    /** Where page {@code page} stands now. */
    public PageState pageState(int page) {
        if (page < 0 || page >= geometry.pages()) {
            throw new IllegalArgumentException("page " + page + " is out of range 0.." + (geometry.pages() - 1));
        }
        return pool.state(page);
    }

    /**
     * Allocates {@code n} blocks, all or none. The stage completes with the blocks, or with a miss:
     * {@link MissReason#LIMIT} when the memory limit is reached, {@link MissReason#NO_PAGES} when
     * the pool's virtual pages are exhausted, else the mapper's reason
     * ({@link PageMapFailure#reason()}, {@link MissReason#MAP_FAILED} for any other error).
     *
     * @throws IllegalArgumentException when {@code n <= 0} or more than the pool's blocks
     */
    public CompletionStage<Allocation> alloc(int n) {
        requireCount(n);
        return place(n, -1);
    }

    /**
     * Allocates {@code n} blocks near block {@code near}, all or none, with the misses of
     * {@link #alloc(int)}: first the free blocks of {@code near}'s page; what they leave goes to a
     * page of the reserve when one holds it (so that a sequence that outgrows its page does not
     * spread into the pages of others), else best fit, as {@link #alloc(int)} places it. A sequence
     * that allocates near its own last block keeps its blocks in as few pages, shared with as few
     * other sequences, as the pool allows: when it ends, or is preempted, its pages empty with it.
     *
     * @throws IllegalArgumentException when {@code n <= 0} or more than the pool's blocks, or when
     *         {@code near} is not a block handed out by this ledger (out of range, free, or
     *         claimed by an allocation still mapping); nothing changes then
     */
    public CompletionStage<Allocation> alloc(int n, int near) {
        requireCount(n);
        if (near < 0 || near >= blocks.totalBlocks()) {
            throw new IllegalArgumentException("cannot allocate near block " + near + ": it is out of range 0.."
                    + (blocks.totalBlocks() - 1));
        }
        if (!blocks.isUsed(near) || claimed.get(near)) {
            throw new IllegalArgumentException("cannot allocate near block " + near + ": it is not allocated");
        }
        return place(n, near / blocksPerPage);
    }

    private void requireCount(int n) {
        if (n <= 0 || n > blocks.totalBlocks()) {
            throw new IllegalArgumentException("cannot allocate " + n + " blocks; a pool of " + geometry.pages()
                    + " pages holds 1.." + blocks.totalBlocks());
        }
    }

    /** Allocates {@code n} blocks, first from {@code nearPage} when it is {@code >= 0}. */
    private CompletionStage<Allocation> place(int n, int nearPage) {
        int local = nearPage < 0 ? 0 : Math.min(n, blocks.freeBlocks(nearPage));
        int rest = n - local;
        int partly = blocks.partlyFreeBlocks() - local;
        // near a block, what its page cannot hold goes to reserve pages of its own when they hold it,
        // within the limit: best fit would put it into a page other sequences hold
        boolean ownPages = nearPage >= 0 && rest > 0
                && Math.ceilDiv(rest, blocksPerPage) <= pool.idle()
                && pool.count(PageState.IN_USE) + allocMapping + Math.ceilDiv(rest, blocksPerPage) <= limit.pages();
        if (!ownPages && rest <= partly) {
            int[] out = new int[n];
            int filled = local == 0 ? 0 : blocks.takeFromPage(nearPage, local, out, 0);
            blocks.take(rest, out, filled);
            return completed(out);
        }
        int pagesNeeded = Math.ceilDiv(ownPages ? rest : rest - partly, blocksPerPage);
        // the pages it opens are filled first, the partly used pages only with what is left over: the
        // allocation touches as few pages as it can, and maps no more than taking every free block first
        int fromPartly = Math.max(0, rest - pagesNeeded * blocksPerPage);
        int fromIdle = Math.min(pagesNeeded, pool.idle());
        int newPages = pagesNeeded - fromIdle;
        int inUse = pool.count(PageState.IN_USE) + allocMapping;
        boolean overLimit = inUse + pagesNeeded > limit.pages()
                || newPages > 0 && committed() + newPages > limit.pages();
        if (overLimit && limit.binds()) {
            return miss(MissReason.LIMIT, "needs " + pagesNeeded + " more pages; the limit is " + limit.pages()
                    + " pages (revision " + limit.revision() + "), " + inUse + " in use, " + committed() + " mapped or mapping");
        }
        if (overLimit || newPages > pool.count(PageState.FREE)) {
            return miss(MissReason.NO_PAGES, "needs " + pagesNeeded + " more pages; " + pool.count(PageState.FREE) + " of "
                    + geometry.pages() + " virtual pages are free, " + pool.idle() + " idle, "
                    + pool.count(PageState.QUARANTINED) + " quarantined");
        }
        int[] out = new int[n];
        int filled = local == 0 ? 0 : blocks.takeFromPage(nearPage, local, out, 0);
        filled += blocks.take(fromPartly, out, filled);
        for (int i = 0; i < fromIdle; i++) {
            filled += blocks.openAndTake(pool.takeIdle(), n - filled, out, filled);
        }
        if (fromIdle > 0) {
            // A reclaimed page taken into use may push the reserve over the limit.
            rebalance();
        }
        if (newPages == 0) {
            consumption.taken(fromIdle);
            return completed(out);
        }
        return allocWithMap(out, filled, fromIdle, newPages);
    }

    private CompletionStage<Allocation> completed(int[] out) {
        allocs++;
        blocksAllocated += out.length;
        return CompletableFuture.completedFuture(Allocation.of(out));
    }

    private CompletionStage<Allocation> miss(MissReason reason, String detail) {
        misses[reason.ordinal()]++;
        return CompletableFuture.completedFuture(Allocation.miss(reason, detail));
    }

    private CompletionStage<Allocation> allocWithMap(int[] out, int filled, int fromIdle, int newPages) {
        int[] batch = new int[newPages];
        for (int i = 0; i < newPages; i++) {
            batch[i] = pool.startMapping();
        }
        allocMapping += newPages;
        allocsInFlight++;
        for (int i = 0; i < filled; i++) {
            claimed.set(out[i]);
        }
        CompletableFuture<Allocation> result = new CompletableFuture<>();
        mapStage(batch).whenComplete((ignored, failure) -> {
            try {
                result.complete(finishAlloc(out, filled, fromIdle, batch, failure));
            } catch (Throwable broken) {
                result.completeExceptionally(broken);
            }
        });
        return result;
    }

    private Allocation finishAlloc(int[] out, int filled, int fromIdle, int[] batch, Throwable failure) {
        allocMapping -= batch.length;
        allocsInFlight--;
        for (int i = 0; i < filled; i++) {
            claimed.clear(out[i]);
        }
        if (failure == null) {
            maps += batch.length;
            for (int page : batch) {
                pool.mappedIntoUse(page);
                filled += blocks.openAndTake(page, out.length - filled, out, filled);
            }
            if (filled != out.length) {
                throw new IllegalStateException("mapped " + batch.length + " pages but filled " + filled + " of " + out.length + " blocks");
            }
            consumption.taken(fromIdle + batch.length);
            allocs++;
            blocksAllocated += out.length;
            return Allocation.of(out);
        }
        Throwable cause = unwrap(failure);
        mapFailed(batch, cause);
        blocks.releaseClaimed(out, filled);
        placeEmptied();
        rebalance();
        MissReason reason = cause instanceof PageMapFailure f && f.reason() != null ? f.reason() : MissReason.MAP_FAILED;
        misses[reason.ordinal()]++;
        return cause instanceof PageMapFailure f && f.isGpuShare() ? Allocation.gpuShareMiss(describe(cause))
                : Allocation.miss(reason, describe(cause));
    }

    /**
     * Frees blocks handed out by {@link #alloc}, all or none.
     *
     * @return how many pages this call emptied that neither stay in the reserve (it is full, or the
     *     limit leaves no room) nor wait for a fence (none is open): {@link #releaseReclaimed} would
     *     unmap them now, so the caller can give their memory back at once, in the same turn
     * @throws IllegalArgumentException when a block is out of range, not handed out (never, or
     *     already freed, or still waiting on its allocation's map) or listed twice; nothing changes
     */
    public int free(int[] blockIds) {
        if (blockIds == null) {
            throw new IllegalArgumentException("blocks to free are required");
        }
        if (allocsInFlight > 0) {
            for (int block : blockIds) {
                if (block >= 0 && block < blocks.totalBlocks() && claimed.get(block)) {
                    throw new IllegalArgumentException("block " + block + " is not allocated yet: an allocation waiting on a map holds it");
                }
            }
        }
        blocks.releaseAll(blockIds);
        blocksFreed += blockIds.length;
        return placeEmptied();
    }

    /** Places the pages emptied since the last call; returns how many went to the reclaimed list under no fence. */
    private int placeEmptied() {
        PageList emptied = blocks.emptied();
        if (emptied.isEmpty()) {
            return 0;
        }
        long tag = fences.newestOpen();
        int releasable = 0;
        for (int i = 0; i < emptied.size(); i++) {
            int page = emptied.get(i);
            boolean room = roomInReserve(PageState.IN_USE);
            pool.becomeIdle(page, PageState.IN_USE, room, tag);
            if (!room && tag == 0) {
                releasable++;
            }
        }
        emptied.clear();
        return releasable;
    }

    /** Opens a batch fence: pages emptied from now on stay mapped until it retires. Ids are 1, 2, ... */
    public long fence() {
        return fences.open();
    }

    /**
     * Retires a batch fence; the pages it held back become releasable once no older open fence
     * holds them ({@link #releaseReclaimed} unmaps them).
     *
     * @throws IllegalArgumentException for a fence never opened or already retired
     */
    public void retire(long fence) {
        fences.retire(fence);
    }

    /**
     * Blocks that {@link #alloc} can hand out now: free blocks of pages in use, plus whole pages
     * from the idle pages and the free pages that the limit lets it map. An allocation of at most
     * this many blocks misses only if its map fails.
     */
    public int availableBlocks() {
        int intoUse = limit.pages() - pool.count(PageState.IN_USE) - allocMapping;
        int mappable = Math.max(0, Math.min(pool.count(PageState.FREE), limit.pages() - committed()));
        int pages = Math.max(0, Math.min(intoUse, pool.idle() + mappable));
        return blocks.partlyFreeBlocks() + pages * blocksPerPage;
    }

    /**
     * Changes the memory limit of this pool on each rank, in bytes rounded down to whole page ids.
     * {@link LimitResult.Outcome#APPLIED}: the pages in use fit; idle pages above the limit move to
     * the reclaimed list for {@link #releaseReclaimed}. {@link LimitResult.Outcome#DEFERRED}: more
     * pages are in use than the limit allows; no page comes into use until they fit, and pages
     * emptied meanwhile are given back. A repeat of the change in force answers how it stands now.
     *
     * @throws IllegalArgumentException for negative bytes, or a revision below 0 or above 2^62;
     *     nothing changes
     */
    public LimitResult setLimit(long bytes, long revision) {
        LimitResult.Outcome outcome = limit.judge(bytes, revision);
        return limitResult(outcome, bytes, revision);
    }

    /**
     * {@link #setLimit} under the next revision, the one in force plus one: it always applies
     * ({@link LimitResult.Outcome#APPLIED} or {@link LimitResult.Outcome#DEFERRED}), whatever
     * revision an earlier change gave.
     *
     * @throws IllegalArgumentException for negative bytes; IllegalStateException when the
     *     revisions ran out (the one in force is {@link Long#MAX_VALUE}); nothing changes
     */
    public LimitResult setNextLimit(long bytes) {
        MemoryLimit.checkBytes(bytes);
        return limitResult(null, bytes, limit.next());
    }

    /** Applies the change when {@code outcome} is {@code null}, then answers how the limit stands. */
    private LimitResult limitResult(LimitResult.Outcome outcome, long bytes, long revision) {
        if (outcome == null) {
            limit.apply(bytes, revision);
            rebalance();
        }
        if (outcome == null || outcome == LimitResult.Outcome.APPLIED) {
            outcome = pool.count(PageState.IN_USE) + allocMapping > limit.pages()
                    ? LimitResult.Outcome.DEFERRED : LimitResult.Outcome.APPLIED;
        }
        return new LimitResult(outcome, limit.revision(), limit.bytes(), limit.pages(), pool.count(PageState.IN_USE));
    }

    /**
     * Pages to map now to bring the reserve (with refills in flight) up to its high mark; 0 while
     * it is at or above its low mark. Bounded by the free pages and the limit.
     */
    public int refillDemand() {
        int supply = pool.count(PageState.RESERVE) + refillMapping;
        if (supply >= consumption.low()) {
            return 0;
        }
        int room = Math.min(pool.count(PageState.FREE), limit.pages() - committed());
        return Math.max(0, Math.min(consumption.high() - supply, room));
    }

    /**
     * Ends a refill interval (adaptive marks move with the pages allocations took since the last
     * call, so call it about once per map round trip) and maps {@link #refillDemand()} pages into
     * the reserve in one batch. Completes with the pages mapped, or with the mapper's failure.
     */
    public CompletionStage<Integer> refill() {
        consumption.endInterval();
        rebalance();
        int demand = refillDemand();
        if (demand == 0) {
            return CompletableFuture.completedFuture(0);
        }
        int[] batch = new int[demand];
        for (int i = 0; i < demand; i++) {
            batch[i] = pool.startMapping();
        }
        refillMapping += demand;
        CompletableFuture<Integer> result = new CompletableFuture<>();
        mapStage(batch).whenComplete((ignored, failure) -> {
            try {
                refillMapping -= batch.length;
                if (failure == null) {
                    maps += batch.length;
                    for (int page : batch) {
                        pool.becomeIdle(page, PageState.MAPPING, roomInReserve(PageState.MAPPING), 0);
                    }
                    rebalance();
                    result.complete(batch.length);
                } else {
                    Throwable cause = unwrap(failure);
                    mapFailed(batch, cause);
                    rebalance();
                    result.completeExceptionally(cause);
                }
            } catch (Throwable broken) {
                result.completeExceptionally(broken);
            }
        });
        return result;
    }

    /**
     * Unmaps, in one batch, the reclaimed pages whose fences have retired, after moving reserve
     * pages above the high mark or the limit to the reclaimed list. Completes with the pages
     * unmapped, or with the mapper's failure (the pages then stay mapped and idle).
     */
    public CompletionStage<Integer> releaseReclaimed() {
        rebalance();
        PageList batch = new PageList(pool.count(PageState.RECLAIMED));
        pool.startUnmapping(PageState.RECLAIMED, fences, batch);
        return unmap(batch.toArray());
    }

    /**
     * Unmaps, in one batch, the whole idle reserve and the reclaimed pages, except pages whose
     * fences are still open. Completes with the pages unmapped, or with the mapper's failure.
     */
    public CompletionStage<Integer> trim() {
        PageList batch = new PageList(pool.idle());
        pool.startUnmapping(PageState.RESERVE, fences, batch);
        pool.startUnmapping(PageState.RECLAIMED, fences, batch);
        rebalance();
        return unmap(batch.toArray());
    }

    private CompletionStage<Integer> unmap(int[] batch) {
        if (batch.length == 0) {
            return CompletableFuture.completedFuture(0);
        }
        unmapCalls++;
        CompletionStage<Void> stage;
        try {
            stage = mapper.unmap(batch.clone());
            if (stage == null) {
                throw new IllegalStateException("the mapper answered an unmap with no stage");
            }
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Integer> result = new CompletableFuture<>();
        stage.whenComplete((ignored, failure) -> {
            try {
                if (failure == null) {
                    unmaps += batch.length;
                    for (int page : batch) {
                        pool.unmapped(page, PageState.UNMAPPING);
                    }
                    rebalance();
                    result.complete(batch.length);
                    return;
                }
                Throwable cause = unwrap(failure);
                boolean[] lost = quarantinedIn(batch, cause);
                for (int i = 0; i < batch.length; i++) {
                    int page = batch[i];
                    if (lost[i]) {
                        pool.quarantine(page, PageState.UNMAPPING);
                    } else {
                        pool.becomeIdle(page, PageState.UNMAPPING, roomInReserve(PageState.UNMAPPING), pool.tag(page));
                    }
                }
                rebalance();
                result.completeExceptionally(cause);
            } catch (Throwable broken) {
                result.completeExceptionally(broken);
            }
        });
        return result;
    }

    /** The quarantined page ids, lowest first: what a sweep asks every rank to release. */
    public int[] quarantined() {
        int[] out = new int[pool.count(PageState.QUARANTINED)];
        int n = 0;
        for (int page = 0; page < geometry.pages() && n < out.length; page++) {
            if (pool.state(page) == PageState.QUARANTINED) {
                out[n++] = page;
            }
        }
        return out;
    }

    /**
     * Every rank confirmed that {@code pages} are unmapped and their memory released: they leave
     * the quarantine and are free to be mapped again.
     *
     * @throws IllegalArgumentException when {@code pages} is null, or a page is out of range, not
     *     quarantined or listed twice; nothing changes
     */
    public void recovered(int[] pages) {
        if (pages == null) {
            throw new IllegalArgumentException("recovered pages are required");
        }
        BitSet seen = new BitSet(geometry.pages());
        for (int page : pages) {
            PageState state = pageState(page);
            if (state != PageState.QUARANTINED) {
                throw new IllegalArgumentException("page " + page + " is " + state + ", not QUARANTINED; only a quarantined page can be recovered");
            }
            if (seen.get(page)) {
                throw new IllegalArgumentException("page " + page + " is listed twice");
            }
            seen.set(page);
        }
        for (int page : pages) {
            pool.unmapped(page, PageState.QUARANTINED);
        }
    }

    private CompletionStage<Void> mapStage(int[] batch) {
        mapCalls++;
        try {
            CompletionStage<Void> stage = mapper.map(batch.clone());
            if (stage == null) {
                throw new IllegalStateException("the mapper answered a map with no stage");
            }
            return stage;
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** A map batch failed: its pages are free again, except those the failure quarantines. */
    private void mapFailed(int[] batch, Throwable cause) {
        boolean[] lost = quarantinedIn(batch, cause);
        for (int i = batch.length - 1; i >= 0; i--) { // back in the order they were taken
            if (lost[i]) {
                pool.quarantine(batch[i], PageState.MAPPING);
            } else {
                pool.unmapped(batch[i], PageState.MAPPING);
            }
        }
    }

    /** Which pages of the batch a failure quarantines; pages it names outside the batch are not its to judge. */
    private static boolean[] quarantinedIn(int[] batch, Throwable cause) {
        boolean[] lost = new boolean[batch.length];
        if (cause instanceof PageMapFailure failure) {
            for (int page : failure.quarantined()) {
                for (int i = 0; i < batch.length; i++) {
                    if (batch[i] == page) {
                        lost[i] = true;
                    }
                }
            }
        }
        return lost;
    }

    /**
     * Whether an idle page fits in the reserve: under the high mark, and the pages kept (in use,
     * mapping, reserve) within the limit with it.
     */
    private boolean roomInReserve(PageState from) {
        int kept = pool.count(PageState.IN_USE) + pool.count(PageState.MAPPING) + pool.count(PageState.RESERVE);
        if (from == PageState.IN_USE || from == PageState.MAPPING) {
            kept--; // the page itself, still counted where it comes from
        }
        return pool.count(PageState.RESERVE) < consumption.high() && kept < limit.pages();
    }

    /**
     * Keeps the reserve within its high mark and the limit, moving pages between the reserve and
     * the reclaimed list; unmapping is left to {@link #releaseReclaimed}.
     */
    private void rebalance() {
        while (pool.count(PageState.RESERVE) > 0
                && (pool.count(PageState.RESERVE) > consumption.high() || kept() > limit.pages())) {
            pool.demote();
        }
        while (pool.count(PageState.RECLAIMED) > 0
                && pool.count(PageState.RESERVE) < consumption.high() && kept() < limit.pages()) {
            pool.promote();
        }
    }

    /** Pages in use, mapping and in the reserve: those the limit must hold. */
    private int kept() {
        return pool.count(PageState.IN_USE) + pool.count(PageState.MAPPING) + pool.count(PageState.RESERVE);
    }

    /** Pages that hold or are about to hold memory. */
    private int committed() {
        return pool.mapped() + pool.count(PageState.MAPPING);
    }

    private static Throwable unwrap(Throwable failure) {
        Throwable cause = failure;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        return cause;
    }

    private static String describe(Throwable cause) {
        String message = cause.getMessage();
        return message == null || message.isEmpty() ? cause.getClass().getName() : message;
    }

    public LedgerStats stats() {
        Map<MissReason, Long> byReason = new EnumMap<>(MissReason.class);
        for (MissReason reason : REASONS) {
            if (misses[reason.ordinal()] > 0) {
                byReason.put(reason, misses[reason.ordinal()]);
            }
        }
        return new LedgerStats(geometry.pages(), blocksPerPage, pool.mapped(), pool.count(PageState.IN_USE),
                pool.count(PageState.RESERVE), pool.count(PageState.RECLAIMED), pool.count(PageState.MAPPING),
                pool.count(PageState.UNMAPPING), pool.count(PageState.QUARANTINED), pool.count(PageState.FREE),
                blocks.usedBlocks(), limit.pages(), limit.revision(), consumption.low(), consumption.high(),
                fences.openCount(), allocs, blocksAllocated, blocksFreed, byReason, maps, unmaps, mapCalls, unmapCalls);
    }

    /** Throws {@link IllegalStateException} describing the first broken invariant of this ledger. */
    public void checkInvariants() {
        blocks.checkInvariants();
        pool.checkInvariants(fences);
        for (int page = 0; page < geometry.pages(); page++) {
            require(blocks.isOpen(page) == (pool.state(page) == PageState.IN_USE), "page " + page + " is "
                    + pool.state(page) + (blocks.isOpen(page) ? " with" : " without") + " blocks in use");
        }
        require(allocMapping + refillMapping == pool.count(PageState.MAPPING), pool.count(PageState.MAPPING)
                + " pages are mapping but allocations own " + allocMapping + " and refills " + refillMapping);
        require(allocsInFlight >= 0 && (allocsInFlight > 0 || claimed.isEmpty()), claimed.cardinality()
                + " blocks are claimed with " + allocsInFlight + " allocations in flight");
        for (int block = claimed.nextSetBit(0); block >= 0; block = claimed.nextSetBit(block + 1)) {
            require(block < blocks.totalBlocks() && blocks.isUsed(block), "claimed block " + block + " is not used");
        }
        require(blocksAllocated - blocksFreed == blocks.usedBlocks() - claimed.cardinality(), "handed out "
                + blocksAllocated + " blocks and freed " + blocksFreed + " but " + blocks.usedBlocks() + " are used and "
                + claimed.cardinality() + " claimed");
        int reserve = pool.count(PageState.RESERVE);
        require(reserve <= consumption.high(), "the reserve holds " + reserve + " pages above its high mark " + consumption.high());
        require(reserve == 0 || kept() <= limit.pages(), "the reserve holds " + reserve + " pages with " + kept()
                + " kept against a limit of " + limit.pages());
        require(pool.count(PageState.RECLAIMED) == 0 || reserve >= consumption.high() || kept() >= limit.pages(),
                pool.count(PageState.RECLAIMED) + " reclaimed pages wait while the reserve has room");
        require(consumption.low() <= consumption.high(), "low mark " + consumption.low() + " above high mark " + consumption.high());
        require(pool.mapped() + pool.count(PageState.MAPPING) + pool.count(PageState.FREE)
                + pool.count(PageState.QUARANTINED) == geometry.pages(), "page states do not add up to " + geometry.pages());
    }

    private static void require(boolean rule, String broken) {
        if (!rule) {
            throw new IllegalStateException(broken);
        }
    }

    /** Free blocks of {@code page} when it is in use, else 0. */
    int freeBlocksIn(int page) {
        return blocks.isOpen(page) ? blocks.freeBlocks(page) : 0;
    }

    /** The whole internal state, rendered exactly: tests compare it before and after a refused call. */
    String describeState() {
        StringBuilder out = new StringBuilder();
        pool.describe(out);
        blocks.describe(out);
        out.append("fences ").append(fences).append(" limit ").append(limit.pages()).append('@').append(limit.revision())
                .append(" marks ").append(consumption.low()).append('/').append(consumption.high())
                .append(" claimed ").append(claimed).append(" inflight ").append(allocsInFlight).append('/')
                .append(allocMapping).append('/').append(refillMapping).append('\n');
        return out.toString();
    }
}

package io.kvpager.core;

/**
 * Hands out the blocks of the pages that are in use, best fit.
 *
 * <p>Block ids are global: block {@code b} is offset {@code b % blocksPerPage} of page
 * {@code b / blocksPerPage}. A page enters with {@link #openAndTake} when it comes into use and
 * leaves by itself when its last block is released; its id then appears in {@link #emptied()}
 * for the ledger to place. In between, a page with some but not all blocks free sits in the
 * bucket for its free count, so that "the partly used page with the fewest free blocks that still
 * holds {@code n}" is one bit scan over the buckets, and every block taken or released costs a
 * constant number of array operations. Each page keeps its free offsets as a stack; a page that
 * leaves keeps its stack for the next time it comes into use, so nothing is allocated per block.
 *
 * <p>Best fit keeps requests inside as few pages as possible and drains the emptiest pages last,
 * so that they can become empty and be given back: a request that fits into some partly used page
 * goes into the one with the fewest free blocks that holds it; one that fits nowhere takes the
 * page with the most free blocks, and so on until the rest fits into one page, which is then
 * chosen best fit. Filling the fullest pages first instead spread such a request over many pages,
 * a few blocks in each, so that no page emptied until every one of their holders had ended.
 */
final class BlockAllocator {

    private static final int CLOSED = -1;
    private static final int NONE = -1;

    private final int blocksPerPage;
    /** log2 of blocksPerPage when it is a power of two (the usual case), else -1: saves a division per block. */
    private final int pageShift;
    private final int pages;
    private final int totalBlocks;
    /** One bit per block: handed out (or claimed for an allocation in flight). */
    private final long[] used;
    /** Free blocks of each page in use, {@link #CLOSED} for pages not in use. */
    private final int[] freeCount;
    /** Per page: its free offsets in {@code [0, freeCount)}, the top of the stack last. */
    private final int[][] freeOffsets;
    /** Buckets by free count 1..blocksPerPage-1: intrusive doubly linked lists of pages. */
    private final int[] bucketHead;
    private final int[] next;
    private final int[] prev;
    /** One bit per bucket that holds a page. */
    private final long[] bucketsInUse;
    private final PageList emptied = new PageList(16);
    private int usedBlocks;
    private int partlyFreeBlocks;
    private int openPages;

    BlockAllocator(int pages, int blocksPerPage) {
        if (pages <= 0 || blocksPerPage <= 0 || (long) pages * blocksPerPage > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(pages + " pages of " + blocksPerPage + " blocks are not a block range");
        }
        this.blocksPerPage = blocksPerPage;
        this.pageShift = Integer.bitCount(blocksPerPage) == 1 ? Integer.numberOfTrailingZeros(blocksPerPage) : -1;
        this.pages = pages;
        this.totalBlocks = pages * blocksPerPage;
        this.used = new long[(totalBlocks + 63) >>> 6];
        this.freeCount = new int[pages];
        java.util.Arrays.fill(freeCount, CLOSED);
        this.freeOffsets = new int[pages][];
        this.bucketHead = new int[blocksPerPage + 1];
        java.util.Arrays.fill(bucketHead, NONE);
        this.next = new int[pages];
        this.prev = new int[pages];
        this.bucketsInUse = new long[(blocksPerPage >>> 6) + 1];
    }

    int blocksPerPage() {
        return blocksPerPage;
    }

    int totalBlocks() {
        return totalBlocks;
    }

    /** Blocks handed out or claimed. */
    int usedBlocks() {
        return usedBlocks;
    }

    /** Free blocks in pages that are in use: what {@link #take} can hand out. */
    int partlyFreeBlocks() {
        return partlyFreeBlocks;
    }

    /** Pages in use. */
    int openPages() {
        return openPages;
    }

    boolean isOpen(int page) {
        return freeCount[page] != CLOSED;
    }

    /** Free blocks of a page in use. */
    int freeBlocks(int page) {
        return freeCount[page];
    }

    boolean isUsed(int block) {
        return (used[block >>> 6] & (1L << block)) != 0;
    }

    /**
     * Takes up to {@code n} blocks from the pages in use, best fit (in as few pages as it can when
     * no page holds them all), into {@code out} from
     * {@code at}; returns how many it took (fewer only when the pages in use run out).
     */
    int take(int n, int[] out, int at) {
        int taken = 0;
        while (taken < n) {
            int want = n - taken;
            int fit = want < blocksPerPage ? nextBucket(want) : -1;
            if (fit < 0) {
                fit = lastBucket();
                if (fit < 0) {
                    break;
                }
            }
            taken += takeFrom(bucketHead[fit], Math.min(want, fit), out, at + taken);
        }
        return taken;
    }

    /**
     * Takes {@code n} free blocks of {@code page}, a page in use with at least {@code n} free, into
     * {@code out} from {@code at}; returns {@code n}.
     */
    int takeFromPage(int page, int n, int[] out, int at) {
        if (freeCount[page] == CLOSED || n <= 0 || n > freeCount[page]) {
            throw new IllegalStateException("page " + page + " has " + freeCount[page] + " free blocks, not " + n);
        }
        return takeFrom(page, n, out, at);
    }

    /**
     * Brings an empty page into use and takes {@code min(n, blocksPerPage)} of its blocks into
     * {@code out} from {@code at}; returns how many it took.
     */
    int openAndTake(int page, int n, int[] out, int at) {
        if (freeCount[page] != CLOSED) {
            throw new IllegalStateException("page " + page + " is already in use");
        }
        if (n <= 0) {
            throw new IllegalStateException("a page comes into use for at least one block, not " + n);
        }
        if (freeOffsets[page] == null) {
            int[] offsets = new int[blocksPerPage];
            for (int i = 0; i < blocksPerPage; i++) {
                offsets[i] = blocksPerPage - 1 - i; // popped in ascending order
            }
            freeOffsets[page] = offsets;
        }
        freeCount[page] = blocksPerPage;
        partlyFreeBlocks += blocksPerPage;
        openPages++;
        return takeFrom(page, Math.min(n, blocksPerPage), out, at);
    }

    private int takeFrom(int page, int n, int[] out, int at) {
        int free = freeCount[page];
        unlink(page, free);
        int[] offsets = freeOffsets[page];
        int base = page * blocksPerPage;
        for (int i = 0; i < n; i++) {
            int block = base + offsets[--free];
            used[block >>> 6] |= 1L << block;
            out[at + i] = block;
        }
        freeCount[page] = free;
        link(page, free);
        partlyFreeBlocks -= n;
        usedBlocks += n;
        return n;
    }

    /**
     * Releases every block in {@code blocks}, all or none: a block out of range, not handed out,
     * or listed twice fails the whole call with an {@link IllegalArgumentException} naming it, and
     * nothing changes. Pages that become empty leave and are listed in {@link #emptied()}.
     */
    void releaseAll(int[] blocks) {
        // Clearing the bits as we go finds blocks listed twice without a scratch set; a failure
        // puts back the bits cleared so far.
        for (int i = 0; i < blocks.length; i++) {
            int block = blocks[i];
            if (block < 0 || block >= totalBlocks) {
                markUsed(blocks, i);
                throw new IllegalArgumentException("block " + block + " is out of range 0.." + (totalBlocks - 1));
            }
            long bit = 1L << block;
            if ((used[block >>> 6] & bit) == 0) {
                markUsed(blocks, i);
                throw new IllegalArgumentException(listedBefore(blocks, i)
                        ? "block " + block + " is listed twice"
                        : "block " + block + " is not allocated");
            }
            used[block >>> 6] &= ~bit;
        }
        for (int from = 0; from < blocks.length; ) {
            int page = pageOf(blocks[from]);
            int to = from + 1;
            while (to < blocks.length && pageOf(blocks[to]) == page) {
                to++;
            }
            returnRun(page, blocks, from, to, false);
            from = to;
        }
    }

    /**
     * Puts back blocks that this allocator handed out and that were never passed on, newest
     * first, so that each page's free stack is as it was before they were taken.
     */
    void releaseClaimed(int[] blocks, int count) {
        for (int i = 0; i < count; i++) {
            int block = blocks[i];
            if (!isUsed(block)) {
                throw new IllegalStateException("claimed block " + block + " is not in use");
            }
            used[block >>> 6] &= ~(1L << block);
        }
        for (int to = count; to > 0; ) {
            int page = pageOf(blocks[to - 1]);
            int from = to - 1;
            while (from > 0 && pageOf(blocks[from - 1]) == page) {
                from--;
            }
            returnRun(page, blocks, from, to, true);
            to = from;
        }
    }

    /** Pages that became empty since the last call; the caller drains it. */
    PageList emptied() {
        return emptied;
    }

    private int pageOf(int block) {
        return pageShift >= 0 ? block >>> pageShift : block / blocksPerPage;
    }

    /**
     * Puts blocks {@code [from, to)} of {@code blocks}, all in {@code page} and with their bits
     * already cleared, back on the page's free stack (newest first when {@code reverse}), moving the
     * page between buckets once for the whole run.
     */
    private void returnRun(int page, int[] blocks, int from, int to, boolean reverse) {
        int free = freeCount[page];
        unlink(page, free);
        int[] offsets = freeOffsets[page];
        int base = page * blocksPerPage;
        if (reverse) {
            for (int i = to - 1; i >= from; i--) {
                offsets[free++] = blocks[i] - base;
            }
        } else {
            for (int i = from; i < to; i++) {
                offsets[free++] = blocks[i] - base;
            }
        }
        int count = to - from;
        usedBlocks -= count;
        if (free == blocksPerPage) {
            freeCount[page] = CLOSED;
            partlyFreeBlocks -= blocksPerPage - count;
            openPages--;
            emptied.push(page);
        } else {
            freeCount[page] = free;
            partlyFreeBlocks += count;
            link(page, free);
        }
    }

    private void markUsed(int[] blocks, int count) {
        for (int i = 0; i < count; i++) {
            used[blocks[i] >>> 6] |= 1L << blocks[i];
        }
    }

    private static boolean listedBefore(int[] blocks, int index) {
        for (int i = 0; i < index; i++) {
            if (blocks[i] == blocks[index]) {
                return true;
            }
        }
        return false;
    }

    /** The largest free count whose bucket holds a page, or -1. */
    private int lastBucket() {
        for (int word = bucketsInUse.length - 1; word >= 0; word--) {
            long bits = bucketsInUse[word];
            if (bits != 0) {
                return (word << 6) + 63 - Long.numberOfLeadingZeros(bits);
            }
        }
        return -1;
    }

    /** The smallest free count at or above {@code from} whose bucket holds a page, or -1. */
    private int nextBucket(int from) {
        int word = from >>> 6;
        long bits = bucketsInUse[word] & (-1L << from);
        while (true) {
            if (bits != 0) {
                return (word << 6) + Long.numberOfTrailingZeros(bits);
            }
            if (++word == bucketsInUse.length) {
                return -1;
            }
            bits = bucketsInUse[word];
        }
    }

    private boolean bucketMarked(int free) {
        return (bucketsInUse[free >>> 6] & (1L << free)) != 0;
    }

    private void link(int page, int free) {
        if (free <= 0 || free >= blocksPerPage) {
            return;
        }
        int head = bucketHead[free];
        next[page] = head;
        prev[page] = NONE;
        if (head != NONE) {
            prev[head] = page;
        }
        bucketHead[free] = page;
        bucketsInUse[free >>> 6] |= 1L << free;
    }

    private void unlink(int page, int free) {
        if (free <= 0 || free >= blocksPerPage) {
            return;
        }
        int before = prev[page];
        int after = next[page];
        if (before != NONE) {
            next[before] = after;
        } else {
            bucketHead[free] = after;
            if (after == NONE) {
                bucketsInUse[free >>> 6] &= ~(1L << free);
            }
        }
        if (after != NONE) {
            prev[after] = before;
        }
    }

    /** Throws {@link IllegalStateException} naming the first broken rule of this allocator. */
    void checkInvariants() {
        int used = 0;
        int partly = 0;
        int open = 0;
        int inBuckets = 0;
        for (int page = 0; page < pages; page++) {
            int base = page * blocksPerPage;
            int usedHere = 0;
            for (int offset = 0; offset < blocksPerPage; offset++) {
                if (isUsed(base + offset)) {
                    usedHere++;
                }
            }
            used += usedHere;
            int[] offsets = freeOffsets[page];
            if (freeCount[page] == CLOSED) {
                require(usedHere == 0, "page " + page + " is not in use but has " + usedHere + " blocks used");
                if (offsets != null) {
                    requireDistinctFree(page, offsets, blocksPerPage);
                }
                continue;
            }
            open++;
            int free = freeCount[page];
            require(offsets != null, "page " + page + " is in use without free offsets");
            require(free == blocksPerPage - usedHere, "page " + page + " counts " + free + " free blocks, its bits say "
                    + (blocksPerPage - usedHere));
            require(free < blocksPerPage, "page " + page + " is empty but still in use");
            requireDistinctFree(page, offsets, free);
            partly += free;
            if (free > 0) {
                inBuckets++;
            }
        }
        require(used == usedBlocks, "usedBlocks is " + usedBlocks + " but " + used + " bits are set");
        require(partly == partlyFreeBlocks, "partlyFreeBlocks is " + partlyFreeBlocks + " but pages in use hold " + partly);
        require(open == openPages, "openPages is " + openPages + " but " + open + " pages are in use");
        int linked = 0;
        for (int free = 0; free <= blocksPerPage; free++) {
            boolean bucket = free > 0 && free < blocksPerPage;
            require(bucketMarked(free) == (bucketHead[free] != NONE), "bucket " + free + " is marked "
                    + bucketMarked(free) + " but its head is " + bucketHead[free]);
            require(bucket || bucketHead[free] == NONE, "bucket " + free + " must stay empty");
            int before = NONE;
            for (int page = bucketHead[free]; page != NONE; page = next[page]) {
                require(freeCount[page] == free, "page " + page + " with " + freeCount[page] + " free sits in bucket " + free);
                require(prev[page] == before, "page " + page + " has a broken back link in bucket " + free);
                require(++linked <= pages, "bucket " + free + " loops");
                before = page;
            }
        }
        require(linked == inBuckets, linked + " pages are in buckets but " + inBuckets + " are partly free");
    }

    private void requireDistinctFree(int page, int[] offsets, int free) {
        long[] seen = new long[(blocksPerPage + 63) >>> 6];
        for (int i = 0; i < free; i++) {
            int offset = offsets[i];
            require(offset >= 0 && offset < blocksPerPage, "page " + page + " lists free offset " + offset);
            require((seen[offset >>> 6] & (1L << offset)) == 0, "page " + page + " lists free offset " + offset + " twice");
            seen[offset >>> 6] |= 1L << offset;
            require(!isUsed(page * blocksPerPage + offset), "page " + page + " lists used block "
                    + (page * blocksPerPage + offset) + " as free");
        }
    }

    private static void require(boolean rule, String broken) {
        if (!rule) {
            throw new IllegalStateException(broken);
        }
    }

    /** Every page in use with its free stack and every bucket in order: for exact before/after comparisons. */
    void describe(StringBuilder out) {
        out.append("used=").append(usedBlocks).append(" partlyFree=").append(partlyFreeBlocks).append('\n');
        for (int page = 0; page < pages; page++) {
            if (freeCount[page] != CLOSED) {
                out.append("page ").append(page).append(" free ").append(freeCount[page]).append(" stack [");
                for (int i = 0; i < freeCount[page]; i++) {
                    out.append(i == 0 ? "" : " ").append(freeOffsets[page][i]);
                }
                out.append("]\n");
            }
        }
        for (int free = 1; free < blocksPerPage; free++) {
            if (bucketHead[free] != NONE) {
                out.append("bucket ").append(free).append(':');
                for (int page = bucketHead[free]; page != NONE; page = next[page]) {
                    out.append(' ').append(page);
                }
                out.append('\n');
            }
        }
    }
}

package io.kvpager.core;

/**
 * The page ids of one pool and the state of each ({@link PageState}), with the lists the ledger
 * takes pages from: free (unmapped) pages, the reserve, and the reclaimed pages. Every transition
 * names the state it expects the page in, so a ledger bug surfaces at once as an
 * {@link IllegalStateException} instead of a page counted twice.
 *
 * <p>Idle pages (reserve and reclaimed) carry the fence tag they were emptied under; see
 * {@link BatchFences}. Reclaimed pages are reused before reserve pages: they are the ones that
 * would otherwise be unmapped.
 */
final class PagePool {

    private static final PageState[] STATES = PageState.values();

    private final byte[] state;
    private final long[] tag;
    private final int[] counts = new int[STATES.length];
    private final PageList free;
    private final PageList reserve = new PageList(16);
    private final PageList reclaimed = new PageList(16);

    PagePool(int pages) {
        state = new byte[pages];
        tag = new long[pages];
        free = new PageList(pages);
        for (int page = pages - 1; page >= 0; page--) {
            free.push(page); // the lowest page ids are mapped first
        }
        counts[PageState.FREE.ordinal()] = pages;
    }

    int pages() {
        return state.length;
    }

    PageState state(int page) {
        return STATES[state[page]];
    }

    int count(PageState s) {
        return counts[s.ordinal()];
    }

    /** Pages holding memory for sure: in use, reserve, reclaimed and being unmapped. */
    int mapped() {
        return count(PageState.IN_USE) + count(PageState.RESERVE) + count(PageState.RECLAIMED) + count(PageState.UNMAPPING);
    }

    /** Idle pages an allocation may take into use without a map. */
    int idle() {
        return count(PageState.RESERVE) + count(PageState.RECLAIMED);
    }

    /** The fence tag of an idle page. */
    long tag(int page) {
        return tag[page];
    }

    /** Takes a free page for a map: FREE to MAPPING; -1 when there is none. */
    int startMapping() {
        if (free.isEmpty()) {
            return -1;
        }
        int page = free.pop();
        move(page, PageState.FREE, PageState.MAPPING);
        return page;
    }

    /** A mapped page comes into use: MAPPING to IN_USE. */
    void mappedIntoUse(int page) {
        move(page, PageState.MAPPING, PageState.IN_USE);
    }

    /** Takes an idle page into use, reclaimed ones first; -1 when there is none. */
    int takeIdle() {
        if (!reclaimed.isEmpty()) {
            int page = reclaimed.pop();
            move(page, PageState.RECLAIMED, PageState.IN_USE);
            return page;
        }
        if (!reserve.isEmpty()) {
            int page = reserve.pop();
            move(page, PageState.RESERVE, PageState.IN_USE);
            return page;
        }
        return -1;
    }

    /**
     * A mapped page becomes idle, from {@code from} (IN_USE, MAPPING or UNMAPPING), into the
     * reserve or the reclaimed list, tagged {@code fenceTag}.
     */
    void becomeIdle(int page, PageState from, boolean toReserve, long fenceTag) {
        PageState to = toReserve ? PageState.RESERVE : PageState.RECLAIMED;
        move(page, from, to);
        tag[page] = fenceTag;
        (toReserve ? reserve : reclaimed).push(page);
    }

    /** Moves the newest reserve page to the reclaimed list, keeping its tag. */
    void demote() {
        int page = reserve.pop();
        move(page, PageState.RESERVE, PageState.RECLAIMED);
        reclaimed.push(page);
    }

    /** Moves the newest reclaimed page into the reserve, keeping its tag. */
    void promote() {
        int page = reclaimed.pop();
        move(page, PageState.RECLAIMED, PageState.RESERVE);
        reserve.push(page);
    }

    /**
     * Moves every page of the reserve (or of the reclaimed list) whose tag {@code fences} allow
     * to UNMAPPING and appends it to {@code out}.
     */
    void startUnmapping(PageState from, BatchFences fences, PageList out) {
        PageList list = switch (from) {
            case RESERVE -> reserve;
            case RECLAIMED -> reclaimed;
            default -> throw new IllegalStateException("pages are unmapped from the reserve or the reclaimed list, not " + from);
        };
        for (int i = list.size() - 1; i >= 0; i--) {
            int page = list.get(i);
            if (fences.releasable(tag[page])) {
                list.removeAt(i);
                move(page, from, PageState.UNMAPPING);
                out.push(page);
            }
        }
    }

    /** A map failed, an unmap completed, or a quarantined page was released everywhere: back to FREE. */
    void unmapped(int page, PageState from) {
        move(page, from, PageState.FREE);
        tag[page] = 0;
        free.push(page);
    }

    /** A page whose state on some rank is unknown, from MAPPING or UNMAPPING. */
    void quarantine(int page, PageState from) {
        move(page, from, PageState.QUARANTINED);
    }

    /** Moves a page between states, checking where it was. */
    private void move(int page, PageState from, PageState to) {
        if (state[page] != from.ordinal()) {
            throw new IllegalStateException("page " + page + " is " + state(page) + ", expected " + from + " to make it " + to);
        }
        state[page] = (byte) to.ordinal();
        counts[from.ordinal()]--;
        counts[to.ordinal()]++;
    }

    /** Throws {@link IllegalStateException} naming the first broken rule of this pool. */
    void checkInvariants(BatchFences fences) {
        int[] seen = new int[STATES.length];
        for (int page = 0; page < state.length; page++) {
            seen[state[page]]++;
        }
        for (PageState s : STATES) {
            require(seen[s.ordinal()] == counts[s.ordinal()], s + " counts " + counts[s.ordinal()] + " pages but "
                    + seen[s.ordinal()] + " are " + s);
        }
        requireList(free, PageState.FREE);
        requireList(reserve, PageState.RESERVE);
        requireList(reclaimed, PageState.RECLAIMED);
        for (int page = 0; page < state.length; page++) {
            PageState s = state(page);
            if (s == PageState.RESERVE || s == PageState.RECLAIMED) {
                require(tag[page] >= 0 && tag[page] <= fences.lastIssued(), "page " + page + " carries fence tag " + tag[page]
                        + " but the last fence issued is " + fences.lastIssued());
            }
        }
    }

    private void requireList(PageList list, PageState s) {
        require(list.size() == count(s), s + " list holds " + list.size() + " pages but " + count(s) + " are " + s);
        boolean[] listed = new boolean[state.length];
        for (int i = 0; i < list.size(); i++) {
            int page = list.get(i);
            require(state[page] == s.ordinal(), "page " + page + " is in the " + s + " list but is " + state(page));
            require(!listed[page], "page " + page + " is twice in the " + s + " list");
            listed[page] = true;
        }
    }

    private static void require(boolean rule, String broken) {
        if (!rule) {
            throw new IllegalStateException(broken);
        }
    }

    /** Every page's state and tag and the lists in order: for exact before/after comparisons. */
    void describe(StringBuilder out) {
        for (int page = 0; page < state.length; page++) {
            out.append(page).append(':').append(state(page));
            if (tag[page] != 0) {
                out.append('@').append(tag[page]);
            }
            out.append(page + 1 < state.length ? " " : "\n");
        }
        out.append("free ").append(free).append(" reserve ").append(reserve).append(" reclaimed ").append(reclaimed).append('\n');
    }
}

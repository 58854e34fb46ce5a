package io.kvpager.cli.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which blocks the demo's engine moves to answer a reclaim without preempting: the blocks of its
 * emptiest pages, copied into the free blocks of its other pages, so that the pages they leave
 * empty and go back while every request keeps its KV.
 *
 * <p>A page gives its memory back only once every block in it is free, and the pages an engine
 * holds are seldom full: each request grows into pages of its own, and its last one is partly
 * used. Those free blocks are of no use to another model, but moving the few blocks of a nearly
 * empty page into them empties that page. The pages are taken emptiest first (the fewest blocks
 * to copy) for as long as the free blocks left in the others hold every block moved, up to the
 * pages asked; the blocks go to the fullest pages first, so that the pages left partly used are
 * few. Pages that cannot be emptied this way are left to {@link ReclaimVictims}.
 */
final class BlockMoves {

    /**
     * One block to move: block {@code index} of {@code request}'s table, now {@code from}, to a free
     * block of page {@code toPage}.
     */
    record Move(ServedRequest request, int index, int from, int toPage) {
    }

    /**
     * The moves, grouped by the page they go to (in the order to fill them), and the pages they empty.
     *
     * @param byDestination destination page to the moves into it, at most its free blocks
     * @param heldIn destination page to a block of it that a request holds (the allocator's {@code near})
     * @param emptied the pages the moves empty
     */
    record Plan(Map<Integer, List<Move>> byDestination, Map<Integer, Integer> heldIn, List<Integer> emptied) {

        static final Plan NONE = new Plan(Map.of(), Map.of(), List.of());

        int moves() {
            return byDestination.values().stream().mapToInt(List::size).sum();
        }
    }

    private BlockMoves() {
    }

    /**
     * @param running the requests holding blocks: every block in the pages they hold that none of
     *     them holds is free
     * @param blocksPerPage blocks in one page: block {@code b} lies in page {@code b / blocksPerPage}
     * @param pages the most pages to empty
     * @return the moves; {@link Plan#NONE} when no page can be emptied this way
     */
    static Plan plan(List<ServedRequest> running, int blocksPerPage, long pages) {
        if (blocksPerPage < 1) {
            throw new IllegalArgumentException("a page holds at least one block, got " + blocksPerPage);
        }
        Map<Integer, List<Move>> inPage = new HashMap<>();
        for (ServedRequest request : running) {
            int[] blocks = request.blocks();
            for (int i = 0; i < blocks.length; i++) {
                int page = blocks[i] / blocksPerPage;
                inPage.computeIfAbsent(page, p -> new ArrayList<>()).add(new Move(request, i, blocks[i], -1));
            }
        }
        // emptiest first; equal ones the higher page first, as the victims' order goes
        List<Integer> order = new ArrayList<>(inPage.keySet());
        order.sort(Comparator.comparingInt((Integer p) -> inPage.get(p).size()).thenComparing(Comparator.reverseOrder()));
        long freeInAll = 0;
        for (List<Move> held : inPage.values()) {
            freeInAll += blocksPerPage - held.size();
        }
        // emptying a page moves its blocks and loses its free blocks as room: take pages while the rest still hold them
        int take = 0;
        long moved = 0;
        long room = freeInAll;
        while (take < order.size() - 1 && take < pages) {
            List<Move> held = inPage.get(order.get(take));
            long roomLeft = room - (blocksPerPage - held.size());
            if (moved + held.size() > roomLeft) {
                break;
            }
            moved += held.size();
            room = roomLeft;
            take++;
        }
        if (take == 0) {
            return Plan.NONE;
        }
        List<Integer> emptied = List.copyOf(order.subList(0, take));
        // fullest destinations first
        List<Integer> destinations = new ArrayList<>(order.subList(take, order.size()));
        destinations.sort(Comparator.comparingInt((Integer p) -> inPage.get(p).size()).reversed().thenComparing(Comparator.naturalOrder()));
        Map<Integer, List<Move>> byDestination = new LinkedHashMap<>();
        Map<Integer, Integer> heldIn = new HashMap<>();
        int d = 0;
        int freeInD = blocksPerPage - inPage.get(destinations.getFirst()).size();
        for (int page : emptied) {
            for (Move move : inPage.get(page)) {
                while (freeInD == 0) {
                    d++;
                    freeInD = blocksPerPage - inPage.get(destinations.get(d)).size();
                }
                int to = destinations.get(d);
                byDestination.computeIfAbsent(to, p -> new ArrayList<>()).add(new Move(move.request(), move.index(), move.from(), to));
                heldIn.putIfAbsent(to, inPage.get(to).getFirst().from());
                freeInD--;
            }
        }
        return new Plan(byDestination, heldIn, emptied);
    }
}

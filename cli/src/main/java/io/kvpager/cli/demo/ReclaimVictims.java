package io.kvpager.cli.demo;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which running requests the demo's engine preempts to answer a reclaim of some blocks: whole
 * requests, chosen by page so that whole pages empty (a page gives its memory back to the GPU only
 * once every block in it is free), and so that the least work is thrown away.
 *
 * <p>Every request holding a block in a page is preempted with it, whole. The pages are taken
 * cheapest first: a page's cost is the tokens of KV its holders hold (what their next turn computes
 * again) over the blocks preempting them frees. A request still prefilling has allocated its whole
 * context but written little of it, so it costs almost nothing; a request decoding costs about the
 * same per block as any other, and then the emptiest page goes first (the fewest of the engine's
 * blocks: the ones closest to empty). The engine grows each request near its own last block, so a
 * page holds parts of one or two requests, mostly, and emptying one preempts that many. Pages are
 * taken until as many pages as asked are empty (counted in pages, not blocks: the blocks a victim
 * frees in pages that others still hold give nothing back), each page's holders latest arrival
 * first. A victim a later page made needless (its holders emptied enough pages of their own) is
 * then spared, the one holding the most KV first.
 */
final class ReclaimVictims {

    private ReclaimVictims() {
    }

    /**
     * @param running the requests holding blocks
     * @param blocksPerPage blocks in one page: block {@code b} lies in page {@code b / blocksPerPage}
     * @param pages pages to empty
     * @return the requests to preempt, in the order chosen; all of them when they hold fewer pages
     */
    static List<ServedRequest> choose(List<ServedRequest> running, int blocksPerPage, long pages) {
        if (blocksPerPage < 1) {
            throw new IllegalArgumentException("a page holds at least one block, got " + blocksPerPage);
        }
        Map<Integer, List<ServedRequest>> holdersOf = new HashMap<>();
        Map<Integer, Integer> usedInPage = new HashMap<>();
        List<ServedRequest> latestFirst = new ArrayList<>(running);
        latestFirst.sort(ServedRequest.BY_ARRIVAL.reversed());
        for (ServedRequest request : latestFirst) {
            for (int block : request.blocks()) {
                int page = block / blocksPerPage;
                usedInPage.merge(page, 1, Integer::sum);
                List<ServedRequest> holders = holdersOf.computeIfAbsent(page, p -> new ArrayList<>());
                if (holders.isEmpty() || holders.getLast() != request) {
                    holders.add(request);
                }
            }
        }
        Map<Integer, Double> costOf = new HashMap<>();
        holdersOf.forEach((page, holders) -> {
            long tokens = 0;
            long freed = 0;
            for (ServedRequest holder : holders) {
                tokens += holder.tokensInCache();
                freed += holder.blockCount();
            }
            costOf.put(page, tokens / (double) Math.max(1, freed));
        });
        List<Integer> order = new ArrayList<>(usedInPage.keySet());
        order.sort(Comparator.comparingDouble((Integer p) -> costOf.get(p)).thenComparingInt(usedInPage::get)
                .thenComparing(Comparator.<Integer>reverseOrder()));
        LinkedHashSet<ServedRequest> victims = new LinkedHashSet<>();
        for (int page : order) {
            if (emptied(holdersOf, victims) >= pages) {
                break;
            }
            // every holder of the page goes: it empties, and so may pages its holders shared with earlier victims
            victims.addAll(holdersOf.get(page));
        }
        // a later page's holders may have emptied enough pages without an earlier victim: that one is
        // spared, those holding the most KV looked at first
        List<ServedRequest> inOrder = List.copyOf(victims);
        List<ServedRequest> costliestFirst = new ArrayList<>(inOrder);
        costliestFirst.sort(Comparator.comparingLong(ServedRequest::tokensInCache).reversed());
        for (ServedRequest victim : costliestFirst) {
            victims.remove(victim);
            if (emptied(holdersOf, victims) < pages) {
                victims.add(victim);
            }
        }
        return inOrder.stream().filter(victims::contains).toList();
    }

    /** Pages whose every holder is a victim. */
    private static long emptied(Map<Integer, List<ServedRequest>> holdersOf, Set<ServedRequest> victims) {
        long emptied = 0;
        for (List<ServedRequest> holders : holdersOf.values()) {
            if (victims.containsAll(holders)) {
                emptied++;
            }
        }
        return emptied;
    }
}

package io.kvpager.core;

import io.kvpager.MissReason;
import java.util.BitSet;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * Random engines against the ledger: allocations, frees (good and bad), limit changes, fences,
 * refills, releases and trims, with a mapper that answers late, in any order, or fails (with or
 * without quarantined pages, or by throwing). {@link LedgerModel} checks everything after each step.
 */
class PageLedgerProperties {

    record Pool(int pages, int blocksPerPage, int low, int high, boolean adaptive) {}

    sealed interface Step {}

    record Alloc(int blocks) implements Step {}

    /** An allocation near a held block ({@code pick} chooses it), or near one not held (refused). */
    record AllocNear(int blocks, int pick) implements Step {}

    record Free(int which, int count) implements Step {}

    record BadFree(int kind, int pick) implements Step {}

    record Limit(int pages, int revisionStep) implements Step {}

    record Fence() implements Step {}

    record Retire(int which) implements Step {}

    record Refill() implements Step {}

    record Release() implements Step {}

    record Trim() implements Step {}

    /** The next map fails: 0 out of memory, 1 quarantining its first page, 2 thrown, 3 a plain error. */
    record FailMap(int kind) implements Step {}

    /** The next unmap fails, the same kinds. */
    record FailUnmap(int kind) implements Step {}

    /** From now on the mapper holds its answers, or answers at once (releasing what it held). */
    record Hold(boolean on) implements Step {}

    /** The mapper answers one held call. */
    record Answer(int which) implements Step {}

    static final class Injected extends RuntimeException {
        Injected(String message) {
            super(message);
        }
    }

    @Provide
    Arbitrary<Pool> pools() {
        return Combinators.combine(Arbitraries.integers().between(1, 10), Arbitraries.of(1, 2, 3, 4, 8),
                Arbitraries.integers().between(0, 3), Arbitraries.integers().between(0, 4), Arbitraries.of(true, false))
                .as((pages, perPage, low, extra, adaptive) -> new Pool(pages, perPage, low, low + extra, adaptive));
    }

    @Provide
    Arbitrary<List<Step>> steps() {
        Arbitrary<Integer> any = Arbitraries.integers().between(0, 1000);
        Arbitrary<Step> step = Arbitraries.frequencyOf(
                Tuple.of(12, Arbitraries.integers().between(1, 20).map(Alloc::new)),
                Tuple.of(6, Combinators.combine(Arbitraries.integers().between(1, 20), any).as(AllocNear::new)),
                Tuple.of(10, Combinators.combine(any, any).as(Free::new)),
                Tuple.of(2, Combinators.combine(any, any).as(BadFree::new)),
                Tuple.of(2, Combinators.combine(Arbitraries.integers().between(0, 11), Arbitraries.integers().between(-1, 2))
                        .as(Limit::new)),
                Tuple.of(3, Arbitraries.just(new Fence())),
                Tuple.of(3, any.map(Retire::new)),
                Tuple.of(3, Arbitraries.just(new Refill())),
                Tuple.of(3, Arbitraries.just(new Release())),
                Tuple.of(1, Arbitraries.just(new Trim())),
                Tuple.of(2, Arbitraries.integers().between(0, 3).map(FailMap::new)),
                Tuple.of(1, Arbitraries.integers().between(0, 3).map(FailUnmap::new)),
                Tuple.of(2, Arbitraries.of(true, false).map(Hold::new)),
                Tuple.of(4, any.map(Answer::new)));
        return step.list().ofMinSize(1).ofMaxSize(80);
    }

    @Property(tries = 400)
    void theLedgerStaysConsistentUnderAnySequence(@ForAll("pools") Pool pool, @ForAll("steps") List<Step> steps) {
        ScriptedMapper mapper = new ScriptedMapper();
        PageLedger ledger = new PageLedger(TestPools.geometry(pool.pages(), pool.blocksPerPage()), mapper,
                new ReserveMarks(pool.low(), pool.high(), pool.adaptive()));
        LedgerModel model = new LedgerModel(ledger, view(mapper),
                failure -> failure instanceof PageMapFailure || failure instanceof Injected);
        for (Step step : steps) {
            switch (step) {
                case Alloc a -> model.alloc(a.blocks(), !mapper.scripted());
                case AllocNear a -> model.allocNear(a.blocks(), a.pick(), !mapper.scripted());
                case Free f -> model.free(f.which(), f.count());
                case BadFree b -> model.badFree(b.kind(), b.pick());
                case Limit l -> model.setLimit(l.pages(), l.revisionStep());
                case Fence f -> model.fence();
                case Retire r -> model.retire(r.which());
                case Refill r -> model.refill();
                case Release r -> model.releaseReclaimed();
                case Trim t -> model.trim();
                case FailMap f -> mapper.nextMap(outcome(f.kind(), "map"));
                case FailUnmap f -> mapper.nextUnmap(outcome(f.kind(), "unmap"));
                case Hold h -> {
                    mapper.holding = h.on();
                    if (!h.on()) {
                        mapper.releaseAll();
                    }
                }
                case Answer a -> {
                    if (!mapper.held().isEmpty()) {
                        mapper.release(Math.floorMod(a.which(), mapper.held().size()));
                    }
                }
            }
            model.check();
        }
        mapper.holding = false;
        mapper.forgetScripts();
        mapper.releaseAll();
        model.drain();
    }

    private static ScriptedMapper.Outcome outcome(int kind, String call) {
        return switch (kind) {
            case 0 -> new ScriptedMapper.Fail(new PageMapFailure(MissReason.OUT_OF_MEMORY, call + ": out of memory", null, null));
            case 1 -> new ScriptedMapper.FailLosingFirst();
            case 2 -> new ScriptedMapper.Throw(new Injected(call + " threw"));
            default -> new ScriptedMapper.Fail(new Injected(call + " failed"));
        };
    }

    private static LedgerModel.MapperView view(ScriptedMapper mapper) {
        return new LedgerModel.MapperView() {
            @Override
            public boolean mapped(int page) {
                BitSet known = mapper.mappedAndKnown();
                return known.get(page);
            }

            @Override
            public boolean lost(int page) {
                return mapper.lost.get(page);
            }

            @Override
            public List<int[]> unmapCalls() {
                return mapper.unmapCalls;
            }
        };
    }
}

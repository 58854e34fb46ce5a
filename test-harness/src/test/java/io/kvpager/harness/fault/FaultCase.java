package io.kvpager.harness.fault;

import io.kvpager.Layout;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One combination of the fault matrix: which driver call, on which rank of TP=4, at which page of
 * the batch, how it fails, and the layout of the pool.
 *
 * @param rank the tp rank of the faulty worker
 */
record FaultCase(FaultOp op, int rank, BatchPosition position, FaultKind kind, Layout layout) {

    /** The pool's tensor-parallel size. */
    static final int TP = 4;
    /** The ranks a fault is put on: first, middle and last. */
    static final List<Integer> RANKS = List.of(0, TP / 2, TP - 1);

    /** The combinations that mean something, layout by layout, kind by kind: the matrix that runs. */
    static List<FaultCase> meaningful() {
        return product().stream().filter(c -> c.meaninglessBecause() == null).toList();
    }

    /** Every combination of the five dimensions, meaningful or not. */
    static List<FaultCase> product() {
        List<FaultCase> all = new ArrayList<>();
        for (Layout layout : Layout.values()) {
            for (FaultKind kind : FaultKind.values()) {
                for (FaultOp op : FaultOp.values()) {
                    for (int rank : RANKS) {
                        for (BatchPosition position : BatchPosition.values()) {
                            all.add(new FaultCase(op, rank, position, kind, layout));
                        }
                    }
                }
            }
        }
        return all;
    }

    /** Why this combination means nothing (and is not generated), or {@code null} when it means something. */
    String meaninglessBecause() {
        if (!kind.inDriver() && op != FaultOp.MAP && op != FaultOp.UNMAP) {
            return kind + " loses the whole " + op.action() + " request whatever driver call it would make: run once per "
                    + "request, as MAP (an allocation) and UNMAP (a trim)";
        }
        if (!kind.inDriver() && position != BatchPosition.FIRST) {
            return kind + " loses the whole request: no page of the batch is special";
        }
        if (op == FaultOp.SYNCHRONIZE && position != BatchPosition.FIRST) {
            return "the rank synchronizes once per map batch, after its last page: no page position";
        }
        if (kind == FaultKind.OUT_OF_MEMORY && (op == FaultOp.UNMAP || op == FaultOp.RELEASE || op == FaultOp.SYNCHRONIZE)) {
            return op.call().driverName() + " takes no memory: the driver does not answer it with CUDA_ERROR_OUT_OF_MEMORY";
        }
        return null;
    }

    /** {@code PAGE_MAJOR create on pp0/tp2 at the middle page: DRIVER_ERROR}. */
    String name() {
        String where = !kind.inDriver() ? "whole " + op.action() + " request"
                : op.perPage() ? position.name().toLowerCase(Locale.ROOT) + " page of the " + op.action() + " batch"
                : "end of the " + op.action() + " batch";
        return layout + " " + op.call().shortName() + " on pp0/tp" + rank + ", " + where + ": " + kind;
    }
}

package io.kvpager.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.Allocation;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** Shorthands for ledger tests whose mapper answers at once. */
public final class Ledgers {

    private Ledgers() {
    }

    /** The answer of a stage that must already be complete. */
    public static <T> T now(CompletionStage<T> stage) {
        CompletableFuture<T> future = stage.toCompletableFuture();
        assertThat(future).as("stage complete on return").isDone();
        return future.join();
    }

    static int[] blocks(PageLedger ledger, int n) {
        Allocation allocation = now(ledger.alloc(n));
        assertThat(allocation.isMiss()).as("alloc(%d) answered %s", n, allocation).isFalse();
        assertThat(allocation.size()).isEqualTo(n);
        ledger.checkInvariants();
        return allocation.blocks();
    }

    static Allocation miss(PageLedger ledger, int n) {
        Allocation allocation = now(ledger.alloc(n));
        assertThat(allocation.isMiss()).as("alloc(%d) answered %s", n, allocation).isTrue();
        ledger.checkInvariants();
        return allocation;
    }

    /** Blocks {@code from} (inclusive) to {@code to} (exclusive). */
    static int[] range(int from, int to) {
        int[] blocks = new int[to - from];
        for (int i = 0; i < blocks.length; i++) {
            blocks[i] = from + i;
        }
        return blocks;
    }
}

package io.kvpager.impl.worker;

import io.kvpager.protocol.Owner;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rank that saw its owner's node leave (the rank itself was paused, or cut off) and then sees the
 * owner claim its group again once the node is back keeps the group: the owner's lease is renewed.
 * An owner whose node stays gone loses its group when the grace ends, even if it claims again.
 */
@ExtendWith(VertxExtension.class)
class GroupOwnersTest {

    private static final long GRACE_MS = 200;

    /** The cluster's membership as a test drives it. */
    private static final class Membership implements NodeDepartures {
        final Set<String> present = ConcurrentHashMap.newKeySet();
        volatile Consumer<String> onLeft;

        @Override
        public Runnable subscribe(Context context, Consumer<String> onLeft) {
            this.onLeft = onLeft;
            return () -> this.onLeft = null;
        }

        @Override
        public boolean present(String nodeId) {
            return present.contains(nodeId);
        }

        void leave(String nodeId) {
            present.remove(nodeId);
            onLeft.accept(nodeId);
        }
    }

    private static <T> T on(Context context, Supplier<T> work) throws Exception {
        Promise<T> done = Promise.promise();
        context.runOnContext(v -> done.complete(work.get()));
        return done.future().await(10, TimeUnit.SECONDS);
    }

    @Test
    void anOwnerWhoseNodeIsBackRenewsItsLeaseByClaimingAgain(Vertx vertx) throws Exception {
        Context context = vertx.getOrCreateContext();
        Membership membership = new Membership();
        membership.present.addAll(List.of("back", "gone"));
        List<String> expired = new CopyOnWriteArrayList<>();
        Promise<Void> goneExpired = Promise.promise();
        GroupOwners owners = new GroupOwners(vertx, context, "pp0/tp0", GRACE_MS, (group, owner) -> {
            expired.add(group + "@" + owner);
            if (owner.isOn("gone")) {
                goneExpired.tryComplete();
            }
        }, membership);
        Owner back = new Owner("back", 1);
        Owner gone = new Owner("gone", 1);
        on(context, () -> {
            owners.start();
            owners.claim(0, back);
            owners.claim(1, gone);
            membership.leave("back");
            membership.leave("gone");
            return null;
        });
        assertThat(on(context, owners::lapsing)).isEqualTo(2);

        // the owner claims again while its node is still away: the lease keeps lapsing
        on(context, () -> {
            owners.claim(0, back);
            return null;
        });
        assertThat(on(context, owners::lapsing)).isEqualTo(2);

        // its node is back, and it claims again: renewed; the other owner's lease still ends
        membership.present.add("back");
        on(context, () -> {
            owners.claim(0, back);
            owners.claim(1, gone);
            return null;
        });
        assertThat(on(context, owners::lapsing)).isEqualTo(1);
        Future.<Void>future(p -> goneExpired.future().onComplete(p)).await(10, TimeUnit.SECONDS);
        assertThat(on(context, () -> owners.owner(0))).isEqualTo(back);
        assertThat(expired).containsExactly("1@" + gone);
        on(context, () -> {
            owners.stop();
            return null;
        });
    }

    @Test
    void theLeaseStatedIsTheWholeGraceWhileTheNodeIsAMemberAndWhatIsLeftOfItOnceItLeft(Vertx vertx) throws Exception {
        Context context = vertx.getOrCreateContext();
        Membership membership = new Membership();
        membership.present.add("n");
        long graceMs = 60_000;
        GroupOwners owners = new GroupOwners(vertx, context, "pp0/tp0", graceMs, (group, owner) -> { }, membership);
        Owner owner = new Owner("n", 1);
        on(context, () -> {
            owners.start();
            owners.claim(0, owner);
            return null;
        });
        assertThat(on(context, () -> owners.leaseMs(0))).isEqualTo(graceMs);
        long before = System.nanoTime();
        long lapsing = on(context, () -> {
            membership.leave("n");
            return owners.leaseMs(0);
        });
        long elapsedMs = (System.nanoTime() - before) / 1_000_000;
        // what is left of the grace: never more than it, never less than it minus the time it took to ask
        assertThat(lapsing).isBetween(graceMs - elapsedMs - 1, graceMs);
        on(context, () -> {
            owners.stop();
            return null;
        });
        // outside a cluster no lease ends: the answer states none
        GroupOwners alone = new GroupOwners(vertx, context, "pp0/tp0", graceMs, (group, o) -> { }, NodeDepartures.NONE);
        assertThat(on(context, () -> {
            alone.claim(0, owner);
            return alone.leaseMs(0);
        })).isEqualTo(-1L);
    }

    @Test
    void theRetiredOwnersAndTheNewestEpochsKeptAreTheLatest256(Vertx vertx) throws Exception {
        Context context = vertx.getOrCreateContext();
        GroupOwners owners = new GroupOwners(vertx, context, "pp0/tp0", GRACE_MS, (group, owner) -> { }, new Membership());
        on(context, () -> {
            for (int epoch = 1; epoch <= 257; epoch++) {
                owners.retire(new Owner("n", epoch));
                owners.claim(epoch, new Owner("n", epoch));
            }
            return null;
        });
        // the first retired owner and the first group's epoch were dropped, the 256 after them kept
        assertThat(on(context, () -> owners.retired(new Owner("n", 1)))).isFalse();
        assertThat(on(context, () -> owners.retired(new Owner("n", 2)))).isTrue();
        assertThat(on(context, () -> owners.retired(new Owner("n", 257)))).isTrue();
        assertThat(on(context, () -> owners.supersededBy(1, new Owner("n", 0)))).isEqualTo(-1L);
        assertThat(on(context, () -> owners.supersededBy(2, new Owner("n", 0)))).isEqualTo(2L);
        assertThat(on(context, () -> owners.supersededBy(257, new Owner("n", 0)))).isEqualTo(257L);
    }
}

package io.kvpager.impl.worker;

import io.kvpager.FailureCode;
import io.kvpager.Layout;
import io.kvpager.cache.RankFailure;
import io.kvpager.protocol.RankFailureReply;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.spi.DeviceException;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real worker's failures as fields: the same code and text a plain failure has, and the rank,
 * group, page, driver error and what a rollback left behind, which nobody reads from the text.
 */
@ExtendWith(VertxExtension.class)
class WorkerFailureFieldsTest {

    @Test
    void aFailedRollbackSaysSoInItsFields(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(6, Layout.PER_LAYER, 8)))
                .compose(created -> {
                    // page 2's third tensor fails set-access; undoing it, the second tensor's unmap fails too
                    rank.sim().faults().add(new Fault(DriverCall.ACCESS, null, 2, 3, 1, "CUDA_ERROR_INVALID_VALUE", 0, false));
                    rank.sim().faults().add(new Fault(DriverCall.UNMAP, null, 2, 2, 1, "CUDA_ERROR_UNKNOWN", 0, false));
                    return rank.failsWithFields(WorkerAction.MAP, pages(6, "m", 1, 2));
                })
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure).isEqualTo(new RankFailure("pp0/tp1", FailureCode.DRIVER_ERROR, "pp0/tp1 group 6 page 2: "
                            + "cuMemSetAccess failed: CUDA_ERROR_INVALID_VALUE (injected by the fault plan); rollback incomplete "
                            + "(page 2: unmap a new handle: cuMemUnmap failed: CUDA_ERROR_UNKNOWN (injected by the fault plan)), "
                            + "pages not restored: [2]", 6, 2, "CUDA_ERROR_INVALID_VALUE", false, List.of(2)));
                    test.completeNow();
                })));
    }

    @Test
    void anOutOfMemoryRolledBackCleanlyIsCompleteWithItsDriverError(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 16)))
                .compose(created -> {
                    rank.sim().faults().add(Fault.error(DriverCall.MAP, DeviceException.OUT_OF_MEMORY).onPage(5));
                    return rank.failsWithFields(WorkerAction.MAP, pages(7, "m", 2, 3, 5, 6));
                })
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.code()).isEqualTo(FailureCode.OUT_OF_MEMORY);
                    assertThat(failure.group()).isEqualTo(7);
                    assertThat(failure.page()).isEqualTo(5);
                    assertThat(failure.driverError()).isEqualTo(DeviceException.OUT_OF_MEMORY);
                    assertThat(failure.rollbackComplete()).isTrue();
                    assertThat(failure.unrestoredPages()).isEmpty();
                    assertThat(failure.message()).startsWith("pp0/tp1 group 7 page 5: cuMemMap failed: CUDA_ERROR_OUT_OF_MEMORY");
                    test.completeNow();
                })));
    }

    @Test
    void aBadRequestHasNoPageNorDriverError(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 16)))
                .compose(created -> rank.failsWithFields(WorkerAction.MAP, pages(7, "m", 16)))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure).isEqualTo(new RankFailure("pp0/tp1", FailureCode.BAD_REQUEST, "pp0/tp1 group 7: pages[0] = 16 "
                            + "is out of range; the group has pages 0..15", 7, RankFailure.NONE, null, true, List.of()));
                    test.completeNow();
                })));
    }

    /** A sender that does not ask for fields gets the plain failure it always got: code and text. */
    @Test
    void withoutTheHeaderAFailureIsAPlainReplyException(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.fails(WorkerAction.VIEWS, SimRank.group(3)))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure).isNotInstanceOf(RankFailureReply.class);
                    assertThat(failure.failureCode()).isEqualTo(404);
                    assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 3: no tensors on this rank; send create-tensors first");
                    test.completeNow();
                })));
    }
}

package io.kvpager.impl.worker;

import io.kvpager.FailureCode;
import io.kvpager.Layout;
import io.kvpager.protocol.TensorView;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.sim.DriverCall;
import io.kvpager.sim.Fault;
import io.kvpager.spi.DeviceException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

import static io.kvpager.impl.worker.SimRank.PAGE_BYTES;
import static io.kvpager.impl.worker.SimRank.group;
import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Driver failures in the middle of a batch, injected through the sim's fault plan: the caller gets
 * the code and a text naming rank, group and first failing page, and the rank's mappings are
 * exactly what they were before the batch.
 */
@ExtendWith(VertxExtension.class)
class MapFailureTest {

    @ParameterizedTest
    @EnumSource(Layout.class)
    void outOfMemoryOnTheKthPageUnmapsTheEarlierPages(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, layout, 16)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "before", 9)))
                .compose(mapped -> {
                    SimRank.DeviceState before = rank.state();
                    rank.sim().faults().add(Fault.error(DriverCall.MAP, DeviceException.OUT_OF_MEMORY).onPage(5));
                    return rank.fails(WorkerAction.MAP, pages(7, "m", 2, 3, 5, 6)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(FailureCode.OUT_OF_MEMORY.code());
                        assertThat(failure.getMessage())
                                .startsWith("pp0/tp1 group 7 page 5: cuMemMap failed: CUDA_ERROR_OUT_OF_MEMORY");
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                .compose(failure -> rank.send(WorkerAction.STATS, new JsonObject()))
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getJsonObject("groups").getJsonObject("7").getInteger("mappedPages")).isEqualTo(1);
                    assertThat(stats.getInteger("handlesAlive")).isEqualTo(rank.sim().handlesAlive());
                    test.completeNow();
                })));
    }

    @Test
    void aRealOutOfMemoryOnCreateIs507NamingThePage(Vertx vertx, VertxTestContext test) {
        // room for exactly three 8 MiB page ids
        SimRank rank = new SimRank(vertx, new JsonObject().put("capacityBytes", 3 * 4 * PAGE_BYTES));
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(1, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.fails(WorkerAction.MAP, pages(1, "m", 0, 1, 2, 3, 4)))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.failureCode()).isEqualTo(507);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 1 page 3: cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
                    assertThat(rank.sim().handlesAlive()).isZero();
                    assertThat(rank.sim().mappings()).isEmpty();
                    test.completeNow();
                })));
    }

    @Test
    void otherDriverErrorIs500AndRollsBackAPartlyMappedPerLayerPage(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(2, Layout.PER_LAYER, 8)))
                .compose(created -> {
                    SimRank.DeviceState before = rank.state();
                    // the third tensor's setAccess of page 4: two tensors of that page are mapped by then
                    rank.sim().faults().add(new Fault(DriverCall.ACCESS, null, 4, 3, 1, "CUDA_ERROR_INVALID_VALUE", 0, false));
                    return rank.fails(WorkerAction.MAP, pages(2, "m", 1, 4, 6)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(500);
                        assertThat(failure.getMessage()).startsWith("pp0/tp1 group 2 page 4: cuMemSetAccess failed: CUDA_ERROR_INVALID_VALUE");
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                // nothing is left behind that would stop the same pages from mapping now
                .compose(failure -> rank.send(WorkerAction.MAP, pages(2, "again", 1, 4, 6)))
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(12);
                    test.completeNow();
                })));
    }

    @ParameterizedTest
    @EnumSource(Layout.class)
    void failedMapOverTheZeroPagePutsTheZeroPageBack(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(3, layout, 8).put("zeroPage", true)))
                .compose(created -> {
                    SimRank.DeviceState before = rank.state();
                    rank.sim().faults().add(Fault.error(DriverCall.CREATE, DeviceException.OUT_OF_MEMORY).nth(3));
                    return rank.fails(WorkerAction.MAP, pages(3, "m", 0, 1, 2, 3)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(507);
                        assertThat(failure.getMessage()).startsWith("pp0/tp1 group 3 page "
                                + (layout == Layout.PAGE_MAJOR ? 2 : 0) + ": cuMemCreate failed: CUDA_ERROR_OUT_OF_MEMORY");
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                .onComplete(test.succeedingThenComplete());
    }

    @ParameterizedTest
    @EnumSource(Layout.class)
    void failedUnmapMapsTheUndonePagesBackWithTheirContents(Layout layout, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(4, layout, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(4, "m", 0, 1, 2, 3)))
                .compose(mapped -> rank.send(WorkerAction.VIEWS, group(4)))
                .compose(views -> {
                    TensorView view = TensorView.fromJson(views.getJsonArray("views").getJsonObject(3));
                    long page1 = view.blockAddress(4);
                    return rank.onRankThread(() -> {
                        rank.sim().write(page1, new byte[] {42});
                        return page1;
                    });
                })
                .compose(page1 -> {
                    SimRank.DeviceState before = rank.state();
                    rank.sim().faults().add(Fault.error(DriverCall.UNMAP, "CUDA_ERROR_ILLEGAL_ADDRESS").onPage(2));
                    return rank.fails(WorkerAction.UNMAP, pages(4, "u", 1, 3, 2, 0)).compose(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(500);
                        assertThat(failure.getMessage()).startsWith("pp0/tp1 group 4 page 2: cuMemUnmap failed: CUDA_ERROR_ILLEGAL_ADDRESS");
                        assertThat(rank.state()).as("same handles mapped at the same addresses").isEqualTo(before);
                        return rank.onRankThread(() -> rank.sim().read(page1, 1));
                    });
                })
                .onComplete(test.succeeding(read -> test.verify(() -> {
                    assertThat(read).containsExactly(42);
                    test.completeNow();
                })));
    }

    @Test
    void aFailedRollbackIsReportedAndThePageCanBeUnmappedLater(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(6, Layout.PER_LAYER, 8)))
                .compose(created -> {
                    // page 2's third tensor fails set-access; undoing it, the second tensor's unmap fails too
                    rank.sim().faults().add(new Fault(DriverCall.ACCESS, null, 2, 3, 1, "CUDA_ERROR_INVALID_VALUE", 0, false));
                    rank.sim().faults().add(new Fault(DriverCall.UNMAP, null, 2, 2, 1, "CUDA_ERROR_UNKNOWN", 0, false));
                    return rank.fails(WorkerAction.MAP, pages(6, "m", 1, 2));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(500);
                    assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 6 page 2: cuMemSetAccess failed: CUDA_ERROR_INVALID_VALUE "
                            + "(injected by the fault plan); rollback incomplete (page 2: unmap a new handle: cuMemUnmap failed: "
                            + "CUDA_ERROR_UNKNOWN (injected by the fault plan)), pages not restored: [2]");
                    assertThat(rank.sim().handlesAlive()).as("tensors 0 and 1 of page 2 stay mapped").isEqualTo(2);
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    JsonObject group = stats.getJsonObject("groups").getJsonObject("6");
                    assertThat(group.getJsonArray("partlyMappedPages")).isEqualTo(new JsonArray().add(2));
                    assertThat(group.getInteger("mappedPages")).isZero();
                    assertThat(group.getInteger("handles")).isEqualTo(2);
                    return rank.fails(WorkerAction.MAP, pages(6, "m2", 2));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(409);
                    assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 6 page 2: left partly mapped by an earlier failure; "
                            + "unmap it before mapping it again");
                    return rank.send(WorkerAction.UNMAP, pages(6, "u", 2));
                })
                .compose(unmapped -> rank.send(WorkerAction.MAP, pages(6, "m3", 2)))
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(rank.sim().handlesAlive()).isEqualTo(4);
                    assertThat(rank.sim().mappings()).hasSize(4);
                    test.completeNow();
                })));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void releasePagesClearsMappedAndPartlyMappedPagesAndLeavesTheRest(boolean zeroPage, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        int zeroSlots = zeroPage ? 8 * 4 : 0;
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(6, Layout.PER_LAYER, 8).put("zeroPage", zeroPage)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(6, "m", 1, 4)))
                .compose(mapped -> {
                    // as above: page 2 is left with two of its four tensors mapped (with a zero page, each
                    // tensor's map first unmaps the zero page there: the undo's unmap is the fifth of page 2)
                    rank.sim().faults().add(new Fault(DriverCall.ACCESS, null, 2, 3, 1, "CUDA_ERROR_INVALID_VALUE", 0, false));
                    rank.sim().faults().add(new Fault(DriverCall.UNMAP, null, 2, zeroPage ? 5 : 2, 1, "CUDA_ERROR_UNKNOWN", 0, false));
                    return rank.fails(WorkerAction.MAP, pages(6, "m2", 2));
                })
                .compose(failure -> {
                    assertThat(failure.getMessage()).contains("rollback incomplete");
                    return rank.send(WorkerAction.RELEASE_PAGES, pages(6, "r", 5, 2, 1));
                })
                .compose(released -> {
                    assertThat(released).isEqualTo(new JsonObject().put("released", new JsonArray().add(2).add(1))
                            .put("clean", new JsonArray().add(5).add(2).add(1)));
                    return rank.send(WorkerAction.STATS, new JsonObject());
                })
                .compose(stats -> {
                    JsonObject group = stats.getJsonObject("groups").getJsonObject("6");
                    assertThat(group.getInteger("mappedPages")).as("page 4 was not listed").isEqualTo(1);
                    assertThat(group.getJsonArray("partlyMappedPages")).isEmpty();
                    assertThat(group.getInteger("handles")).isEqualTo(4 + (zeroPage ? 1 : 0));
                    assertThat(rank.sim().mappings()).as("page 4's tensors, and the zero page elsewhere")
                            .hasSize(4 + zeroSlots - (zeroPage ? 4 : 0));
                    return rank.send(WorkerAction.RELEASE_PAGES, pages(6, "r2", 1, 2));
                })
                .compose(again -> {
                    assertThat(again.getJsonArray("released")).as("nothing left to release").isEmpty();
                    assertThat(again.getJsonArray("clean")).isEqualTo(new JsonArray().add(1).add(2));
                    return rank.send(WorkerAction.MAP, pages(6, "m3", 1, 2, 5));
                })
                .onComplete(test.succeeding(mapped -> test.verify(() -> {
                    assertThat(mapped.getJsonArray("mapped")).isEqualTo(new JsonArray().add(1).add(2).add(5));
                    test.completeNow();
                })));
    }

    @Test
    void alreadyMappedPageIs409AndNothingOfTheBatchIsMapped(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "first", 5, 6)))
                .compose(mapped -> {
                    SimRank.DeviceState before = rank.state();
                    int callsBefore = rank.device().calls().size();
                    return rank.fails(WorkerAction.MAP, pages(7, "second", 1, 6, 2, 5)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(409);
                        assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 7 page 6: already mapped (so are pages [5])");
                        assertThat(rank.state()).isEqualTo(before);
                        assertThat(rank.device().calls().subList(callsBefore, rank.device().calls().size()))
                                .as("no device call for a refused batch").isEmpty();
                        return failure;
                    });
                })
                .onComplete(test.succeedingThenComplete());
    }

    @Test
    void unmapOfAPageNotMappedIs409AndUnmapsNothing(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PER_LAYER, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "m", 1)))
                .compose(mapped -> {
                    SimRank.DeviceState before = rank.state();
                    return rank.fails(WorkerAction.UNMAP, pages(7, "u", 1, 2)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(409);
                        assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 7 page 2: not mapped");
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                .onComplete(test.succeedingThenComplete());
    }

    @Test
    void otherGeometryForAnExistingGroupIs409(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 8)))
                .compose(created -> {
                    SimRank.DeviceState before = rank.state();
                    return rank.fails(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 9)).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(409);
                        assertThat(failure.getMessage()).startsWith("pp0/tp1 group 7: tensors already exist with Geometry[");
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                .onComplete(test.succeedingThenComplete());
    }

    @Test
    void everyGroupActionBeforeCreateTensorsIs404(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> Future.all(
                        rank.fails(WorkerAction.MAP, pages(3, "m", 0)),
                        rank.fails(WorkerAction.UNMAP, pages(3, "u", 0)),
                        rank.fails(WorkerAction.RELEASE_PAGES, pages(3, "r", 0)),
                        rank.fails(WorkerAction.VIEWS, group(3))))
                .onComplete(test.succeeding(all -> test.verify(() -> {
                    for (int i = 0; i < 4; i++) {
                        ReplyException failure = all.resultAt(i);
                        assertThat(failure.failureCode()).isEqualTo(404);
                        assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 3: no tensors on this rank; send create-tensors first");
                    }
                    assertThat(rank.sim().reservations()).isEmpty();
                    test.completeNow();
                })));
    }

    @Test
    void createTensorsFailureReleasesWhatItReserved(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> {
                    rank.sim().faults().add(Fault.error(DriverCall.RESERVE, DeviceException.OUT_OF_MEMORY).nth(3));
                    return rank.fails(WorkerAction.CREATE_TENSORS, tensors(5, Layout.PER_LAYER, 8));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(507);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 5: cuMemAddressReserve failed: CUDA_ERROR_OUT_OF_MEMORY");
                    assertThat(rank.sim().reservations()).isEmpty();
                    rank.sim().faults().clear();
                    rank.sim().faults().add(Fault.error(DriverCall.MAP, "CUDA_ERROR_INVALID_VALUE").onPage(2).nth(3));
                    return rank.fails(WorkerAction.CREATE_TENSORS, tensors(5, Layout.PER_LAYER, 8).put("zeroPage", true));
                })
                .compose(failure -> {
                    assertThat(failure.failureCode()).isEqualTo(500);
                    assertThat(failure.getMessage()).startsWith("pp0/tp1 group 5 page 2: zero page: cuMemMap failed: CUDA_ERROR_INVALID_VALUE");
                    assertThat(rank.state()).isEqualTo(new SimRank.DeviceState(0, 0, List.of(), List.of()));
                    return rank.send(WorkerAction.TENSORS_CREATED, group(5));
                })
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    assertThat(reply.getBoolean("created")).isFalse();
                    test.completeNow();
                })));
    }

    @Test
    void pageSizeNotAMultipleOfTheGranularityIs400(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.fails(WorkerAction.CREATE_TENSORS, tensors(5, Layout.PAGE_MAJOR, 8).put("pageBytes", 3 << 20)))
                .onComplete(test.succeeding(failure -> test.verify(() -> {
                    assertThat(failure.failureCode()).isEqualTo(400);
                    assertThat(failure.getMessage()).isEqualTo("pp0/tp1 group 5: pageBytes 3145728 is not a multiple of the device "
                            + "granularity 2097152; use 2097152 or 4194304");
                    assertThat(rank.sim().reservations()).isEmpty();
                    test.completeNow();
                })));
    }

    @Test
    void pagesArrayInTheReplyIsTheRequestsOrder(Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(0, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(0, "m", 7, 0, 3)))
                .onComplete(test.succeeding(reply -> test.verify(() -> {
                    assertThat(reply.getJsonArray("mapped")).isEqualTo(new JsonArray().add(7).add(0).add(3));
                    test.completeNow();
                })));
    }
}

package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.IntStream;
import java.util.stream.Stream;

import static io.kvpager.impl.worker.SimRank.pages;
import static io.kvpager.impl.worker.SimRank.tensors;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Malformed requests are refused with 400 and a text naming rank, group when known, and the
 * field; none of them changes a mapping. Group 7 has 8 pages, page 3 mapped.
 */
@ExtendWith(VertxExtension.class)
class BadRequestTest {

    static Stream<Arguments> badRequests() {
        String known = "create-tensors, tensors-created, map, unmap, release-pages, keep-handles, destroy-tensors, stats, views";
        return Stream.of(
                arguments("map", "a string", "pp0/tp1: the body must be a JsonObject, got a String"),
                arguments("map", Buffer.buffer("{\"group\":7}"), "pp0/tp1: the body must be a JsonObject, got a Buffer of 11 bytes"),
                arguments("map", new JsonArray().add(7), "pp0/tp1: the body must be a JsonObject, got a JsonArray"),
                arguments("map", null, "pp0/tp1: the body must be a JsonObject, got none"),
                arguments(null, pages(7, "r", 1), "pp0/tp1: the 'action' header is missing; actions: " + known),
                arguments("frobnicate", pages(7, "r", 1), "pp0/tp1: unknown action 'frobnicate'; actions: " + known),
                arguments("map", pages(7, "r", 1).put("group", null), "pp0/tp1: group is required"),
                arguments("map", pages(7, "r", 1).put("group", "7"), "pp0/tp1: group must be an integer, got \"7\" (String)"),
                arguments("map", pages(7, "r", 1).put("group", 7.5), "pp0/tp1: group must be an integer, got 7.5 (Double)"),
                arguments("map", pages(7, "r", 1).put("group", -1), "pp0/tp1: group must be in 0..2147483647, got -1"),
                arguments("map", pages(7, "r", 1).put("group", 1L << 33), "pp0/tp1: group must be in 0..2147483647, got 8589934592"),
                arguments("map", pages(7, "r").put("pages", 3), "pp0/tp1 group 7: pages must be an array of page ids, got 3 (Integer)"),
                arguments("map", pages(7, "r").put("pages", null),
                        "pp0/tp1 group 7: pages is required"),
                arguments("map", pages(7, "r", 1, 8), "pp0/tp1 group 7: pages[1] = 8 is out of range; the group has pages 0..7"),
                arguments("map", pages(7, "r", -1), "pp0/tp1 group 7: pages[0] = -1 is out of range; the group has pages 0..7"),
                arguments("unmap", pages(7, "r", 3, 3), "pp0/tp1 group 7: pages[1] = 3 appears twice in one request"),
                arguments("map", pages(7, "r", 1, 1), "pp0/tp1 group 7: pages[1] = 1 appears twice in one request"),
                arguments("map", pages(7, "r", IntStream.range(0, 9).toArray()),
                        "pp0/tp1 group 7: pages names 9 page ids but the group has only 8"),
                arguments("map", pages(7, "r").put("pages", new JsonArray().add(1).add(2.5)),
                        "pp0/tp1 group 7: pages[1] must be an integer, got 2.5 (Double)"),
                arguments("map", pages(7, "r").put("pages", new JsonArray().add(1).addNull()),
                        "pp0/tp1 group 7: pages[1] is null; page ids are integers"),
                arguments("map", pages(7, "r", 1).put("requestId", null), "pp0/tp1: requestId is required"),
                arguments("unmap", pages(7, "r", 3).put("requestId", 12), "pp0/tp1: requestId must be a non-empty string, got 12 (Integer)"),
                arguments("map", pages(7, "", 1), "pp0/tp1: requestId must be a non-empty string, got \"\" (String)"),
                arguments("release-pages", pages(7, "r", 3, 3), "pp0/tp1 group 7: pages[1] = 3 appears twice in one request"),
                arguments("release-pages", pages(7, "r", 8), "pp0/tp1 group 7: pages[0] = 8 is out of range; the group has pages 0..7"),
                arguments("release-pages", pages(7, "r").put("pages", "3"),
                        "pp0/tp1 group 7: pages must be an array of page ids, got \"3\" (String)"),
                arguments("release-pages", pages(7, "r", 3).put("group", -1), "pp0/tp1: group must be in 0..2147483647, got -1"),
                arguments("release-pages", pages(7, "r", 3).put("requestId", null), "pp0/tp1: requestId is required"),
                arguments("map", pages(7, "r", 1).put("pp", 1), "pp0/tp1: the request is for pp1 but reached pp0/tp1"),
                arguments("unmap", pages(7, "r", 3).put("tp", 0), "pp0/tp1: the request is for tp0 but reached pp0/tp1"),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("layout", "ROW_MAJOR"),
                        "pp0/tp1 group 8: layout must be \"PER_LAYER\" or \"PAGE_MAJOR\", got \"ROW_MAJOR\""),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("layers", null), "pp0/tp1 group 8: layers is required"),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("kvBuffers", 0),
                        "pp0/tp1 group 8: kvBuffers must be in 1..2147483647, got 0"),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("blockBytes", 4L << 20),
                        "pp0/tp1 group 8: a block of 4194304 bytes does not fit in a page of 2097152 bytes; "
                                + "use blockBytes <= 2097152 or a larger pageBytes"),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("zeroPage", "yes"),
                        "pp0/tp1 group 8: zeroPage must be true or false, got \"yes\" (String)"),
                arguments("create-tensors", tensors(7, Layout.PER_LAYER, 8).put("pages", "8"),
                        "pp0/tp1 group 7: pages must be an integer, got \"8\" (String)"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", 4),
                        "pp0/tp1 group 8: handlePool must be an object, got 4 (Integer)"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("bound", 2)),
                        "pp0/tp1 group 8: handlePool.bound is not a known field; expected handlePool.prefillPages or handlePool.boundPages"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("boundPages", -1)),
                        "pp0/tp1 group 8: handlePool.boundPages must be in 0..8, got -1"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("boundPages", 9)),
                        "pp0/tp1 group 8: handlePool.boundPages must be in 0..8, got 9"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("boundPages", 1.5)),
                        "pp0/tp1 group 8: handlePool.boundPages must be an integer, got 1.5 (Double)"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("prefillPages", "2")),
                        "pp0/tp1 group 8: handlePool.prefillPages must be an integer, got \"2\" (String)"),
                arguments("create-tensors", tensors(8, Layout.PER_LAYER, 8).put("handlePool", new JsonObject().put("prefillPages", 5)),
                        "pp0/tp1 group 8: handlePool.prefillPages 5 is above handlePool.boundPages 4; "
                                + "prefilled handles are idle ones, so the bound must hold them"),
                arguments("create-tensors", tensors(8, Layout.PAGE_MAJOR, 8).put("handlePool", new JsonObject().put("prefillPages", 1)),
                        "pp0/tp1 group 8: handlePool.prefillPages 1 is above handlePool.boundPages 0; "
                                + "prefilled handles are idle ones, so the bound must hold them"),
                arguments("destroy-tensors", new JsonObject(), "pp0/tp1: group is required"),
                arguments("map", pages(7, "r", 1).put("owner", null), "pp0/tp1 group 7: owner is required"),
                arguments("map", pages(7, "r", 1).put("owner", 5), "pp0/tp1 group 7: owner must be a non-empty string, got 5 (Integer)"),
                arguments("unmap", pages(7, "r", 3).put("owner", "node"), "pp0/tp1 group 7: owner: an owner is <nodeId>#<epoch>, got node"),
                arguments("unmap", pages(7, "r", 3).put("owner", "node#"), "pp0/tp1 group 7: owner: an owner is <nodeId>#<epoch>, got node#"),
                arguments("map", pages(7, "r", 1).put("owner", "no de#1"),
                        "pp0/tp1 group 7: owner: an owner's node id must match [A-Za-z0-9._:-]{1,128}, got no de"),
                arguments("map", pages(7, "r", 1).put("owner", "node#-1"), "pp0/tp1 group 7: owner: an owner's epoch must be 0 or more, got -1"),
                arguments("map", pages(7, "r", 1).put("owner", "node#x"),
                        "pp0/tp1 group 7: owner: an owner's epoch must be a whole number, got node#x"),
                arguments("map", pages(7, "r", 1).put("owner", "node#+5"), "pp0/tp1 group 7: owner must be written node#5, got node#+5"),
                arguments("release-pages", pages(7, "r", 3).put("owner", "x".repeat(200) + "#1"),
                        "pp0/tp1 group 7: owner is 202 characters long; at most 148 are taken"),
                // a malformed owner reclaims nothing: the group keeps its owner and its mapped page
                arguments("create-tensors", tensors(7, Layout.PAGE_MAJOR, 8).put("owner", "other#05"),
                        "pp0/tp1 group 7: owner must be written other#5, got other#05"),
                arguments("create-tensors", tensors(7, Layout.PAGE_MAJOR, 8).put("owner", null), "pp0/tp1 group 7: owner is required"),
                arguments("destroy-tensors", SimRank.group(7).put("owner", ""),
                        "pp0/tp1 group 7: owner must be a non-empty string, got \"\" (String)"),
                arguments("tensors-created", SimRank.group(7).put("owner", 7),
                        "pp0/tp1 group 7: owner must be a non-empty string, got 7 (Integer)"),
                arguments("views", new JsonObject().put("group", true), "pp0/tp1: group must be an integer, got true (Boolean)"));
    }

    @ParameterizedTest
    @MethodSource("badRequests")
    void isRefusedWith400AndChangesNothing(String action, Object body, String text, Vertx vertx, VertxTestContext test) {
        SimRank rank = new SimRank(vertx);
        rank.deploy()
                .compose(id -> rank.send(WorkerAction.CREATE_TENSORS, tensors(7, Layout.PAGE_MAJOR, 8)))
                .compose(created -> rank.send(WorkerAction.MAP, pages(7, "setup", 3)))
                .compose(mapped -> {
                    SimRank.DeviceState before = rank.state();
                    return rank.fails(action, body).map(failure -> {
                        assertThat(failure.failureCode()).isEqualTo(400);
                        assertThat(failure.getMessage()).isEqualTo(text);
                        assertThat(rank.state()).isEqualTo(before);
                        return failure;
                    });
                })
                .compose(failure -> rank.send(WorkerAction.STATS, new JsonObject()))
                .onComplete(test.succeeding(stats -> test.verify(() -> {
                    assertThat(stats.getJsonObject("groups").fieldNames()).containsExactly("7");
                    assertThat(stats.getJsonObject("groups").getJsonObject("7").getInteger("mappedPages")).isEqualTo(1);
                    test.completeNow();
                })));
    }
}

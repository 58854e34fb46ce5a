package io.kvpager.protocol;

import io.kvpager.Allocation;
import io.kvpager.LimitResult;
import io.kvpager.MissReason;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The coordinator's requests and replies: what one end writes the other reads back, strictly. */
class CoordinatorRecordsTest {

    static CoordinatorRequest example(CoordinatorAction action) {
        return switch (action) {
            case POOL -> new CoordinatorRequest.Pool();
            case STATS -> new CoordinatorRequest.Stats(500);
            case ALLOC -> new CoordinatorRequest.Alloc(3, 17);
            case FREE -> new CoordinatorRequest.Free(new int[] {0, 1, 2});
            case FENCE -> new CoordinatorRequest.Fence();
            case RETIRED -> new CoordinatorRequest.Retired(12);
            case AVAILABLE -> new CoordinatorRequest.Available();
            case LIMIT -> new CoordinatorRequest.Limit(1L << 30, 4L);
            case TRIM -> new CoordinatorRequest.Trim();
        };
    }

    @ParameterizedTest
    @EnumSource(CoordinatorAction.class)
    void everyRequestReadsBackAsWrittenUnderItsAction(CoordinatorAction action) {
        CoordinatorRequest request = example(action);
        assertThat(request.action()).isEqualTo(action);
        assertThat(CoordinatorAction.of(action.wireName())).isEqualTo(action);
        assertThat(action.delivery().getHeaders().get(CoordinatorAction.HEADER)).isEqualTo(action.wireName());
        assertThat(CoordinatorRequest.fromJson(action, request.toJson())).isEqualTo(request);
    }

    @Test
    void aLimitWithoutRevisionAsksForTheNextOne() {
        CoordinatorRequest.Limit next = new CoordinatorRequest.Limit(5, null);
        assertThat(next.toJson()).isEqualTo(new JsonObject().put("bytes", 5));
        assertThat(CoordinatorRequest.fromJson(CoordinatorAction.LIMIT, next.toJson())).isEqualTo(next);
    }

    @Test
    void statsWithoutRanksWithinMsWaitsTheSendTimeout() {
        assertThat(new CoordinatorRequest.Stats().toJson()).isEqualTo(new JsonObject());
        assertThat(CoordinatorRequest.fromJson(CoordinatorAction.STATS, new JsonObject())).isEqualTo(new CoordinatorRequest.Stats(0));
        assertThatThrownBy(() -> new CoordinatorRequest.Stats(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("ranksWithinMs must be 0");
    }

    @Test
    void anAllocWithoutNearIsPlacedAnywhere() {
        CoordinatorRequest.Alloc anywhere = new CoordinatorRequest.Alloc(3);
        assertThat(anywhere.toJson()).isEqualTo(new JsonObject().put("blocks", 3));
        assertThat(CoordinatorRequest.fromJson(CoordinatorAction.ALLOC, anywhere.toJson())).isEqualTo(anywhere);
        assertThat(anywhere.near()).isEqualTo(CoordinatorRequest.Alloc.ANYWHERE);
        assertThat(new CoordinatorRequest.Alloc(3, 17).toJson()).isEqualTo(new JsonObject().put("blocks", 3).put("near", 17));
    }

    @Test
    void aFreeOwnsItsBlocks() {
        int[] blocks = {4, 5};
        CoordinatorRequest.Free free = new CoordinatorRequest.Free(blocks);
        blocks[0] = 99;
        free.blocks()[1] = 99;
        assertThat(free.toJson().getJsonArray("blocks")).containsExactly(4, 5);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "alloc|{}|blocks is required",
            "alloc|{\"blocks\": 2.5}|blocks must be an integer",
            "alloc|{\"blocks\": 4294967296}|blocks must be",
            "alloc|{\"blocks\": 1, \"near\": 1.5}|near must be an integer",
            "free|{\"blocks\": {}}|blocks must be an array of integers",
            "free|{\"blocks\": [1, null]}|blocks[1] must be an integer",
            "retired|{\"fence\": \"1\"}|fence must be an integer",
            "limit|{\"revision\": 1}|bytes is required",
            "limit|{\"bytes\": 1, \"revision\": null}|revision must be an integer, got null",
            "stats|{\"ranksWithinMs\": 0}|ranksWithinMs must be",
            "stats|{\"ranksWithinMs\": \"1s\"}|ranksWithinMs must be an integer",
    })
    void aMissingOrMistypedFieldIsRefusedNamingIt(String action, String body, String message) {
        assertThatThrownBy(() -> CoordinatorRequest.fromJson(CoordinatorAction.of(action), new JsonObject(body)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void anUnknownOrMissingActionIsRefusedListingTheKnownOnes() {
        assertThatThrownBy(() -> CoordinatorAction.of("map")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("unknown action 'map'; actions: pool, stats, alloc, free, fence, retired, available, limit, trim");
        assertThatThrownBy(() -> CoordinatorAction.of(null)).hasMessageStartingWith("the 'action' header is missing; actions: pool, stats");
        assertThatThrownBy(() -> CoordinatorAction.of("z".repeat(8192))).satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(400));
    }

    @Test
    void repliesReadBackAsWritten() {
        CoordinatorReply.Pool pool = new CoordinatorReply.Pool("llama", List.of(0, 1), 4, 2);
        assertThat(pool.toJson()).isEqualTo(new JsonObject().put("instance", "llama").put("stages", new JsonArray().add(0).add(1))
                .put("tp", 4).put("group", 2));
        assertThat(CoordinatorReply.Pool.fromJson(pool.toJson())).isEqualTo(pool);

        Allocation blocks = CoordinatorReply.Alloc.fromJson(new CoordinatorReply.Alloc(Allocation.of(new int[] {7, 8})).toJson())
                .allocation();
        assertThat(blocks.isMiss()).isFalse();
        assertThat(blocks.blocks()).containsExactly(7, 8);
        Allocation miss = CoordinatorReply.Alloc.fromJson(new CoordinatorReply.Alloc(Allocation.gpuShareMiss("held elsewhere"))
                .toJson()).allocation();
        assertThat(miss.missReason()).isEqualTo(MissReason.GPU_SHARE);
        assertThat(miss.gpuShare()).isTrue();
        assertThat(miss.detail()).isEqualTo("held elsewhere");

        assertThat(CoordinatorReply.Fence.fromJson(new CoordinatorReply.Fence(9).toJson())).isEqualTo(new CoordinatorReply.Fence(9));
        assertThat(CoordinatorReply.Available.fromJson(new CoordinatorReply.Available(64).toJson()))
                .isEqualTo(new CoordinatorReply.Available(64));
        LimitResult result = new LimitResult(LimitResult.Outcome.DEFERRED, 7, 1L << 30, 8, 10);
        assertThat(CoordinatorReply.Limit.fromJson(new CoordinatorReply.Limit(result).toJson()).result()).isEqualTo(result);
        assertThat(new CoordinatorReply.Done().toJson()).isEmpty();
    }

    @Test
    void aReplyOfAnotherVersionIsRefusedNotReadAsZeros() {
        assertThatThrownBy(() -> CoordinatorReply.Limit.fromJson(new JsonObject().put("outcome", "MAYBE")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outcome must be");
        assertThatThrownBy(() -> CoordinatorReply.Limit.fromJson(new CoordinatorReply.Limit(
                new LimitResult(LimitResult.Outcome.APPLIED, 1, 2, 3, 4)).toJson().put("revision", "1")))
                .hasMessageContaining("revision must be an integer");
        assertThatThrownBy(() -> CoordinatorReply.Alloc.fromJson(new JsonObject().put("miss", "NOT_A_REASON").put("detail", "")))
                .hasMessageContaining("miss must be");
        assertThatThrownBy(() -> CoordinatorReply.Fence.fromJson(new JsonObject())).hasMessageContaining("fence is required");
    }
}

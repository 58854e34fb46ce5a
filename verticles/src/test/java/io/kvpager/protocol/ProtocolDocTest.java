package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/protocol.md shows, for every action, a request, a reply and a failure that the records
 * write and read back: the examples cannot drift from the code.
 */
class ProtocolDocTest {

    @ParameterizedTest
    @EnumSource(WorkerAction.class)
    void everyActionHasARequestAReplyAndAFailureTheRecordsRead(WorkerAction action) throws IOException {
        List<JsonObject> examples = examples(action.wireName());
        assertThat(examples).as("request, reply and failure of " + action.wireName()).hasSize(3);
        assertThat(examples.get(0)).isEqualTo(ProtocolExamples.request(action));
        assertThat(ProtocolRecordsTest.writeRequest(action, ProtocolRecordsTest.readRequest(action, examples.get(0))))
                .isEqualTo(examples.get(0));
        assertThat(examples.get(1)).isEqualTo(ProtocolExamples.reply(action));
        assertThat(ProtocolRecordsTest.writeReply(action, ProtocolRecordsTest.readReply(action, examples.get(1))))
                .isEqualTo(examples.get(1));
        assertThat(RankFailureJson.fromJson(examples.get(2))).isEqualTo(ProtocolExamples.failure(action));
    }

    @Test
    void thePublicActionNamesAreTheWorkersAndTheDocsList() throws IOException, ReflectiveOperationException {
        assertThat(WorkerProtocol.ACTIONS).containsExactlyElementsOf(Arrays.stream(WorkerAction.values()).map(WorkerAction::wireName).toList());
        for (WorkerAction action : WorkerAction.values()) {
            // the constants a raw bus client names an action with spell the enum's wire names
            assertThat(WorkerProtocol.class.getField(action.name()).get(null)).as(action.name()).isEqualTo(action.wireName());
        }
        String doc = Files.readString(doc());
        for (String action : WorkerProtocol.ACTIONS) {
            assertThat(doc).contains("### " + action + "\n");
        }
    }

    @ParameterizedTest
    @EnumSource(CoordinatorAction.class)
    void everyCoordinatorActionHasARequestAndRepliesTheRecordsRead(CoordinatorAction action) throws IOException {
        List<JsonObject> examples = examples("coordinator: " + action.wireName());
        assertThat(examples).as("the request of " + action.wireName()).isNotEmpty();
        CoordinatorRequest request = CoordinatorRequest.fromJson(action, examples.getFirst());
        assertThat(request.toJson()).isEqualTo(examples.getFirst());
        List<JsonObject> replies = examples.subList(1, examples.size());
        if (action == CoordinatorAction.STATS) {
            assertThat(replies).as("stats answers with CacheStats.toJson(), described in words").isEmpty();
            return;
        }
        assertThat(replies).as("the replies of " + action.wireName()).isNotEmpty();
        for (JsonObject reply : replies) {
            assertThat(readReply(action, reply).toJson()).isEqualTo(reply);
        }
    }

    private static CoordinatorReply readReply(CoordinatorAction action, JsonObject json) {
        return switch (action) {
            case POOL -> CoordinatorReply.Pool.fromJson(json);
            case ALLOC -> CoordinatorReply.Alloc.fromJson(json);
            case FENCE -> CoordinatorReply.Fence.fromJson(json);
            case AVAILABLE -> CoordinatorReply.Available.fromJson(json);
            case LIMIT -> CoordinatorReply.Limit.fromJson(json);
            case FREE, RETIRED, TRIM -> new CoordinatorReply.Done();
            case STATS -> throw new AssertionError("stats has no reply record");
        };
    }

    @Test
    void theCoordinatorsActionsAreTheDocsList() throws IOException {
        String doc = Files.readString(doc());
        for (String action : CoordinatorAction.wireNames()) {
            assertThat(doc).contains("### coordinator: " + action + "\n");
        }
    }

    /** The JSON blocks of the section {@code ### action}. */
    private static List<JsonObject> examples(String action) throws IOException {
        String doc = Files.readString(doc());
        int start = doc.indexOf("\n### " + action + "\n");
        assertThat(start).as("a section for " + action).isNotNegative();
        int end = doc.indexOf("\n### ", start + 1);
        String section = doc.substring(start, end < 0 ? doc.length() : end);
        List<JsonObject> blocks = new ArrayList<>();
        int from = 0;
        while ((from = section.indexOf("```json\n", from)) >= 0) {
            int close = section.indexOf("\n```", from);
            blocks.add(new JsonObject(section.substring(from + "```json\n".length(), close)));
            from = close + 4;
        }
        return blocks;
    }

    private static Path doc() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path doc = dir.resolve("docs").resolve("protocol.md");
            if (Files.isRegularFile(doc)) {
                return doc;
            }
        }
        throw new AssertionError("docs/protocol.md not found above " + Path.of("").toAbsolutePath());
    }
}

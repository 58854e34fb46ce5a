package io.kvpager.impl.worker;

import io.kvpager.FailureCode;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AnswerCacheTest {

    private static JsonObject request(int page) {
        return new JsonObject().put("action", "map").put("body", new JsonObject().put("pages", page));
    }

    @Test
    void remembersSuccessesAndFailures() {
        AnswerCache cache = new AnswerCache(8);
        Answer ok = Answer.reply(new JsonObject().put("mapped", 1));
        Answer failed = Answer.failure(FailureCode.OUT_OF_MEMORY, "pp0/tp0 group 0 page 2: ...");
        cache.remember("a", request(1), ok);
        cache.remember("b", request(2), failed);
        assertThat(cache.answered("a", request(1))).isSameAs(ok);
        assertThat(cache.answered("b", request(2))).isSameAs(failed);
        assertThat(cache.answered("c", request(3))).isNull();
    }

    @Test
    void forgetsTheLeastRecentlyUsedBeyondItsCapacity() {
        AnswerCache cache = new AnswerCache(2);
        cache.remember("a", request(1), Answer.reply(new JsonObject()));
        cache.remember("b", request(2), Answer.reply(new JsonObject()));
        assertThat(cache.answered("a", request(1))).isNotNull();
        cache.remember("c", request(3), Answer.reply(new JsonObject()));
        assertThat(cache.size()).isEqualTo(2);
        assertThat(cache.answered("b", request(2))).isNull();
        assertThat(cache.answered("a", request(1))).isNotNull();
        assertThat(cache.answered("c", request(3))).isNotNull();
    }

    @Test
    void refusesARequestIdReusedForAnotherRequest() {
        AnswerCache cache = new AnswerCache(2);
        cache.remember("a", request(1), Answer.reply(new JsonObject()));
        assertThatThrownBy(() -> cache.answered("a", request(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("requestId 'a' was already used for another request: {\"action\":\"map\",\"body\":{\"pages\":1}}");
    }

    @Test
    void keepsItsOwnCopyOfTheRequest() {
        AnswerCache cache = new AnswerCache(2);
        JsonObject request = request(1);
        cache.remember("a", request, Answer.reply(new JsonObject()));
        request.put("action", "unmap");
        assertThat(cache.answered("a", request(1))).isNotNull();
    }

    @Test
    void needsRoomForOneAnswer() {
        assertThatThrownBy(() -> new AnswerCache(0)).isInstanceOf(IllegalArgumentException.class);
    }
}

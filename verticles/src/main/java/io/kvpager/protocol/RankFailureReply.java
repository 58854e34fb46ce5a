package io.kvpager.protocol;

import io.kvpager.cache.RankFailure;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.MessageCodec;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.eventbus.ReplyFailure;
import io.vertx.core.json.JsonObject;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;

/**
 * A rank's failure as the event bus carries it to a sender that asked for fields: a
 * {@link ReplyException} (a recipient failure with the failure code and the rank's message, so it
 * reads as any other failure) that also holds the {@link RankFailure}. Across nodes it travels as
 * the JSON of {@link RankFailureJson}, with its own codec ({@link #CODEC_NAME}), as
 * vertx-service-proxy's {@code ServiceException} does.
 */
public final class RankFailureReply extends ReplyException {

    /** The codec's name on the bus. */
    public static final String CODEC_NAME = "kvpager.rank-failure";
    private static final Codec CODEC = new Codec();
    /** The event buses the codec is registered on; a closed Vert.x's bus is forgotten with it. */
    private static final Set<EventBus> REGISTERED = Collections.newSetFromMap(new WeakHashMap<>());

    private final transient RankFailure failure;

    public RankFailureReply(RankFailure failure) {
        super(ReplyFailure.RECIPIENT_FAILURE, failure.code().code(), failure.message(), true);
        this.failure = failure;
    }

    public RankFailure failure() {
        return failure;
    }

    /** The codec, for tests of its wire form. */
    static MessageCodec<RankFailureReply, RankFailureReply> codec() {
        return CODEC;
    }

    /**
     * Registers the codec on {@code bus} unless it is there already; cheap when it is, so that a
     * sender may call it for every request.
     */
    public static void registerCodec(EventBus bus) {
        synchronized (REGISTERED) {
            if (!REGISTERED.add(bus)) {
                return;
            }
            try {
                bus.registerCodec(CODEC);
            } catch (IllegalStateException alreadyThere) {
                // a codec of this name was registered on the bus by other means
            }
        }
    }

    /** Length-prefixed UTF-8 JSON; a local reply is the same immutable object. */
    private static final class Codec implements MessageCodec<RankFailureReply, RankFailureReply> {

        @Override
        public void encodeToWire(Buffer buffer, RankFailureReply reply) {
            Buffer json = RankFailureJson.toJson(reply.failure).toBuffer();
            buffer.appendInt(json.length()).appendBuffer(json);
        }

        @Override
        public RankFailureReply decodeFromWire(int pos, Buffer buffer) {
            int length = buffer.getInt(pos);
            return new RankFailureReply(RankFailureJson.fromJson(new JsonObject(buffer.getBuffer(pos + 4, pos + 4 + length))));
        }

        @Override
        public RankFailureReply transform(RankFailureReply reply) {
            return reply;
        }

        @Override
        public String name() {
            return CODEC_NAME;
        }

        @Override
        public byte systemCodecID() {
            return -1;
        }
    }
}

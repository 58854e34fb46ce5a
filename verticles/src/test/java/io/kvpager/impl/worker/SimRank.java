package io.kvpager.impl.worker;

import io.kvpager.Layout;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.sim.MappedRange;
import io.kvpager.sim.ReservedRange;
import io.kvpager.sim.SimDevice;
import io.kvpager.spi.Device;
import io.kvpager.spi.DeviceFactory;
import io.vertx.core.Context;
import io.kvpager.protocol.WorkerProtocol;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One rank worker on its own simulated GPU, for tests: deploys the worker with the sim device
 * opened through {@link DeviceFactory#forKind}, wrapped in a {@link WatchedDevice}, and keeps the
 * {@link SimDevice} to read its accounting and change its fault plan.
 */
final class SimRank implements DeviceSource {

    /** The sim's granularity and the tests' page size: 2 MiB. */
    static final long PAGE_BYTES = 2L << 20;
    private static final AtomicInteger SERIAL = new AtomicInteger();

    private final Vertx vertx;
    private final WorkerConfig config;
    private volatile SimDevice sim;
    private volatile WatchedDevice device;
    private volatile Context context;
    private volatile String deploymentId;

    /** Rank pp0/tp1 of a fresh instance on a GPU of its own, with these sim options. */
    SimRank(Vertx vertx, JsonObject simOptions) {
        this.vertx = vertx;
        int serial = SERIAL.incrementAndGet();
        JsonObject sim = simOptions.copy().put("gpuKey", "worker-test-" + serial);
        this.config = new WorkerConfig("test" + serial, 0, 1, "sim", 0, sim, null);
    }

    SimRank(Vertx vertx) {
        this(vertx, new JsonObject());
    }

    @Override
    public Device open(WorkerConfig c) {
        sim = (SimDevice) DeviceFactory.forKind("sim").open(c.gpu(), c.rank(), c.deviceOptions());
        context = Vertx.currentContext();
        device = new WatchedDevice(sim);
        return device;
    }

    Future<String> deploy() {
        return RankWorkers.deploy(vertx, config, this).onSuccess(id -> deploymentId = id);
    }

    String deploymentId() {
        return deploymentId;
    }

    WorkerConfig config() {
        return config;
    }

    SimDevice sim() {
        return sim;
    }

    WatchedDevice device() {
        return device;
    }

    /** Runs {@code body} on the rank's own thread, where the device may be called. */
    <T> Future<T> onRankThread(Supplier<T> body) {
        Promise<T> promise = Promise.promise();
        context.runOnContext(v -> {
            try {
                promise.complete(body.get());
            } catch (RuntimeException e) {
                promise.fail(e);
            }
        });
        return promise.future();
    }

    /** Sends {@code body} with {@code action} in the header; the reply's body. */
    Future<JsonObject> send(String action, Object body) {
        DeliveryOptions options = new DeliveryOptions();
        if (action != null) {
            options.addHeader(WorkerAction.HEADER, action);
        }
        return vertx.eventBus().<JsonObject>request(config.address(), body, options).map(message -> message.body());
    }

    Future<JsonObject> send(WorkerAction action, JsonObject body) {
        return send(action.wireName(), body);
    }

    /** Sends and expects a failure; a reply fails the returned future. */
    Future<ReplyException> fails(String action, Object body) {
        return send(action, body).transform(result -> result.succeeded()
                ? Future.failedFuture(new AssertionError(action + " " + body + " was answered " + result.result() + ", expected a failure"))
                : result.cause() instanceof ReplyException e ? Future.succeededFuture(e)
                : Future.failedFuture(result.cause()));
    }

    Future<ReplyException> fails(WorkerAction action, JsonObject body) {
        return fails(action.wireName(), body);
    }

    /** Sends asking for a failure with fields, and expects one: the rank's failure as those fields. */
    Future<io.kvpager.cache.RankFailure> failsWithFields(WorkerAction action, JsonObject body) {
        DeliveryOptions options = WorkerProtocol.askForFailureFields(vertx.eventBus(), new DeliveryOptions()
                .addHeader(WorkerAction.HEADER, action.wireName()));
        return vertx.eventBus().request(config.address(), body, options).transform(result -> result.succeeded()
                ? Future.failedFuture(new AssertionError(action + " " + body + " was answered " + result.result().body()))
                : WorkerProtocol.failureOf(result.cause()) instanceof io.kvpager.cache.RankFailure failure ? Future.succeededFuture(failure)
                : Future.failedFuture(new AssertionError("a failure without fields", result.cause())));
    }

    /** How many of the device's calls since the {@code from}-th were {@code name} ({@code "create"}, {@code "release"}, ...). */
    long callsSince(int from, String name) {
        List<String> calls = device.calls();
        return calls.subList(from, calls.size()).stream().filter(name::equals).count();
    }

    /** The device-side truth: live handles, bytes, mappings (with their handles) and reserved ranges. */
    DeviceState state() {
        return new DeviceState(sim.handlesAlive(), sim.bytesInUse(), sim.mappings(), sim.reservations());
    }

    record DeviceState(int handles, long bytes, List<MappedRange> mappings, List<ReservedRange> reservations) {
    }

    /** The owner of the tests' groups. */
    static final String OWNER = "test-node#1";

    /** A create-tensors body: 2 layers × 2 buffers, 512 KiB blocks (4 per page), 2 MiB pages. */
    static JsonObject tensors(int group, Layout layout, int pages) {
        return new JsonObject().put("group", group).put("layers", 2).put("kvBuffers", 2).put("blockBytes", 512 << 10)
                .put("pageBytes", PAGE_BYTES).put("pages", pages).put("layout", layout.name()).put("owner", OWNER);
    }

    static JsonObject pages(int group, String requestId, int... ids) {
        JsonArray array = new JsonArray();
        for (int id : ids) {
            array.add(id);
        }
        return new JsonObject().put("group", group).put("pages", array).put("requestId", requestId).put("owner", OWNER);
    }

    static JsonObject group(int group) {
        return new JsonObject().put("group", group).put("owner", OWNER);
    }
}

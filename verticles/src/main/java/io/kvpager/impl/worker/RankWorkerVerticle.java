package io.kvpager.impl.worker;

import io.kvpager.internal.bus.KeptRegistration;
import io.kvpager.FailureCode;
import io.kvpager.Geometry;
import io.kvpager.Layout;
import io.kvpager.device.GroupTensors;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.device.RankException;
import io.kvpager.device.RankHandlePool;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.RequestBody;
import io.kvpager.protocol.WireText;
import io.kvpager.protocol.WorkerAction;
import io.kvpager.protocol.WorkerProtocol;
import io.kvpager.protocol.CreateTensorsReply;
import io.kvpager.protocol.CreateTensorsRequest;
import io.kvpager.protocol.DestroyTensorsReply;
import io.kvpager.protocol.DestroyTensorsRequest;
import io.kvpager.protocol.GroupStats;
import io.kvpager.protocol.KeepHandlesReply;
import io.kvpager.protocol.KeepHandlesRequest;
import io.kvpager.protocol.HandlePoolJson;
import io.kvpager.protocol.TensorView;
import io.kvpager.protocol.HandlePoolStats;
import io.kvpager.protocol.PagesReply;
import io.kvpager.protocol.PagesRequest;
import io.kvpager.protocol.RankFailureReply;
import io.kvpager.protocol.RequestFields;
import io.kvpager.protocol.StatsReply;
import io.kvpager.protocol.TensorsCreatedReply;
import io.kvpager.protocol.TensorsCreatedRequest;
import io.kvpager.protocol.ViewsReply;
import io.kvpager.protocol.ViewsRequest;
import io.kvpager.spi.Device;
import io.kvpager.spi.MemoryInfo;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One GPU rank of one cache instance: owns the rank's {@link Device} and every group's tensors,
 * and answers the worker actions at {@code kvpager.<instance>.pp<P>.tp<R>}.
 *
 * <p>Runs as a worker verticle on a pool of one thread ({@link RankWorkers#deploy}): the device is
 * opened and attached in {@link #start()} on that thread, and every handler and driver call runs
 * there too. Every request is answered, with a reply or with {@code fail(code, text)}; whatever a
 * handler throws becomes a failure naming the rank, group and page, so a caller never waits for
 * a timeout.
 *
 * <p>The rank's groups share one {@link RankHandlePool}: unmapped handles wait there, up to the
 * bounds the groups asked for in {@code create-tensors}, for the next map. They hold device
 * memory; {@code stats} counts them in {@code handlesAlive} and shows them as {@code pooledHandles}
 * and {@code pooledBytes}, and {@code deviceUsedBytes} includes them.
 *
 * <p>Every group belongs to one coordinator incarnation, its {@link Owner}: {@code create-tensors}
 * and every request that changes the group's mappings carry the owner, and a request from any
 * other owner is refused with 409 naming both. A {@code create-tensors} from a new owner reclaims
 * the group: everything the previous owner left is unmapped and released before the tensors are
 * made afresh, and the answer says what was reclaimed. When the owner's node leaves the cluster,
 * its groups are released after the grace period ({@link WorkerConfig#leaseGraceMs()}) unless a
 * new owner claims them first ({@link GroupOwners}).
 *
 * <p>Requests and replies are the records of {@code io.kvpager.protocol}; a failure goes with
 * its fields (code, rank, group, page, driver error, whether the rollback was complete and the
 * pages it could not restore) to a sender that asks for them.
 *
 * <p>Stopping unmaps and releases everything, one group per turn of the thread so that requests
 * queued meanwhile are answered with 503, then releases the pooled handles and closes the device.
 */
public final class RankWorkerVerticle extends VerticleBase {

    private static final Logger LOG = LoggerFactory.getLogger(RankWorkerVerticle.class);
    /** The longest requestId taken; a coordinator's are under 64 characters. */
    static final int MAX_REQUEST_ID = RequestFields.MAX_REQUEST_ID;
    private static final java.util.Set<WorkerAction> PAGES_ACTIONS = java.util.EnumSet.of(WorkerAction.MAP, WorkerAction.UNMAP,
            WorkerAction.RELEASE_PAGES);

    private final DeviceSource source;
    private final AnswerCache answers = new AnswerCache(AnswerCache.DEFAULT_CAPACITY);
    private final Map<Integer, GroupTensors> groups = new TreeMap<>();
    private WorkerConfig config;
    private String rank;
    private GpuId gpu;
    private Device device;
    private RankHandlePool handles;
    private Thread thread;
    private MessageConsumer<Object> consumer;
    /** Answers liveness probes from an event loop: see {@link WorkerProtocol#aliveAddress}. */
    private MessageConsumer<Object> alive;
    /** Keep the consumers listed in the cluster's registry (null outside a cluster). */
    private volatile KeptRegistration keptConsumer;
    private volatile KeptRegistration keptAlive;
    private GroupOwners owners;
    private final NodeDepartures departures;
    /** Where answers are sent from in a cluster; {@code null} when they are sent from the rank's thread. */
    private Context replies;
    private boolean stopping;

    /**
     * A worker that opens the configured device kind and follows no cluster; deploy it with
     * {@link RankWorkers#deploymentOptions}. {@link io.kvpager.worker.RankWorker#deploy} deploys one
     * that follows the cluster's departures.
     */
    public RankWorkerVerticle() {
        this(DeviceSource.FACTORY, NodeDepartures.NONE);
    }

    RankWorkerVerticle(DeviceSource source) {
        this(source, NodeDepartures.NONE);
    }

    RankWorkerVerticle(DeviceSource source, NodeDepartures departures) {
        this.source = source;
        this.departures = departures;
    }

    @Override
    public Future<?> start() {
        config = new WorkerConfig(config());
        rank = config.rank();
        if (!context.isWorkerContext()) {
            throw new IllegalStateException(rank + ": a rank worker must run on its own worker thread; deploy it with "
                    + "RankWorkers.deploy or RankWorkers.deploymentOptions");
        }
        thread = Thread.currentThread();
        gpu = GpuId.of(config);
        device = source.open(config);
        try {
            device.attach();
        } catch (RuntimeException e) {
            closeDevice();
            throw e;
        }
        handles = new RankHandlePool(device);
        owners = new GroupOwners(vertx, context, rank, config.leaseGraceMs(), this::leaseEnded, departures);
        owners.start();
        // A clustered event bus opens its connection to a sender's node on the context that first
        // answers there, and that connection outlives this worker's one-thread pool, which closes
        // when the worker is undeployed: answered from the rank's thread, its last events would be
        // refused by the closed pool (with a stack trace) as the node leaves the cluster.
        replies = vertx.isClustered() ? ((VertxInternal) vertx).createEventLoopContext() : null;
        RankFailureReply.registerCodec(vertx.eventBus());
        consumer = vertx.eventBus().consumer(config.address(), this::onMessage);
        return KeptRegistration.keep(vertx, consumer).compose(keeper -> {
                    keptConsumer = keeper;
                    return answerProbes();
                })
                .onSuccess(v -> LOG.info("{} of {} serving {} on {} at {}", rank, config.instance(), device.describe(),
                        thread.getName(), config.address()))
                .onFailure(e -> closeDevice());
    }

    /**
     * In a cluster, registers the liveness probe's consumer on the event loop the answers are sent
     * from, off the rank's thread: a rank in a long map still answers it, a paused or cut-off
     * process does not.
     */
    private Future<Void> answerProbes() {
        if (replies == null) {
            // outside a cluster nobody probes: a process that stops stops its coordinator too
            return Future.succeededFuture();
        }
        Promise<Void> registered = Promise.promise();
        JsonObject answer = new JsonObject().put("rank", rank);
        replies.runOnContext(v -> {
            alive = vertx.eventBus().consumer(WorkerProtocol.aliveAddress(config.address()), probe -> probe.reply(answer));
            KeptRegistration.keep(vertx, alive).onSuccess(keeper -> keptAlive = keeper).<Void>mapEmpty().onComplete(registered);
        });
        return registered.future();
    }

    @Override
    public Future<?> stop() {
        stopping = true;
        for (KeptRegistration kept : new KeptRegistration[] {keptConsumer, keptAlive}) {
            if (kept != null) {
                kept.close();
            }
        }
        if (alive != null) {
            alive.unregister();
        }
        if (owners != null) {
            owners.stop();
        }
        Promise<Void> done = Promise.promise();
        tearDown(new ArrayList<>(groups.keySet()).iterator(), done);
        return done.future();
    }

    /** Destroys one group per turn, so that requests queued meanwhile get their 503 promptly. */
    private void tearDown(Iterator<Integer> remaining, Promise<Void> done) {
        context.runOnContext(v -> {
            if (remaining.hasNext()) {
                int group = remaining.next();
                try {
                    groups.get(group).destroy();
                } catch (RuntimeException e) {
                    LOG.warn("stopping: {}; closing the device gives back the rest", RankException.of(e).text(rank, group));
                }
                groups.remove(group);
                tearDown(remaining, done);
                return;
            }
            try {
                handles.close();
            } catch (RuntimeException e) {
                LOG.warn("stopping: releasing pooled handles failed: {}; closing the device gives them back", e.getMessage());
            }
            try {
                device.close();
                LOG.info("{} of {} stopped", rank, config.instance());
                done.complete();
            } catch (RuntimeException e) {
                done.fail(e);
            }
        });
    }

    private void closeDevice() {
        try {
            device.close();
        } catch (RuntimeException e) {
            LOG.warn("{}: closing the device failed: {}", rank, e.getMessage());
        }
    }

    private void onMessage(Message<Object> message) {
        Request request = new Request();
        Answer answer;
        try {
            answer = answer(message, request);
        } catch (Throwable e) {
            answer = failure(request, e);
        }
        if (replies == null) {
            send(answer, message, request);
        } else {
            Answer ready = answer;
            replies.runOnContext(v -> send(ready, message, request));
        }
    }

    private void send(Answer answer, Message<Object> message, Request request) {
        try {
            answer.sendTo(message);
        } catch (RuntimeException e) {
            LOG.error("{}: answering {} failed; the sender will time out", rank, request.action, e);
        }
    }

    /** The state of one request while it is handled: what the failure text needs to name. */
    private static final class Request {
        String action = "?";
        int group = -1;
    }

    private Answer answer(Message<Object> message, Request request) {
        request.action = String.valueOf(message.headers().get(WorkerAction.HEADER));
        if (Thread.currentThread() != thread) {
            throw new IllegalStateException("handler ran on thread " + Thread.currentThread().getName()
                    + ", not on the rank's thread " + thread.getName());
        }
        if (stopping) {
            throw new RankException(FailureCode.STOPPING, "the worker is stopping");
        }
        WorkerAction action = WorkerAction.of(message.headers().get(WorkerAction.HEADER));
        if (!(message.body() instanceof JsonObject json)) {
            throw new IllegalArgumentException("the body must be a JsonObject, got " + switch (message.body()) {
                case null -> "none";
                case Buffer buffer -> "a Buffer of " + buffer.length() + " bytes";
                case Object other -> "a " + other.getClass().getSimpleName();
            });
        }
        RequestBody body = new RequestBody(json);
        checkRank(body);
        if (action != WorkerAction.STATS && !PAGES_ACTIONS.contains(action)) {
            request.group = groupOf(json);
        }
        return switch (action) {
            case CREATE_TENSORS -> Answer.reply(createTensors(CreateTensorsRequest.fromJson(json)).toJson());
            case TENSORS_CREATED -> tensorsCreated(TensorsCreatedRequest.fromJson(json));
            case MAP, UNMAP, RELEASE_PAGES -> withLease(once(action, json, request), request.group);
            case KEEP_HANDLES -> Answer.reply(keepHandles(KeepHandlesRequest.fromJson(json)).toJson());
            case DESTROY_TENSORS -> Answer.reply(destroyTensors(DestroyTensorsRequest.fromJson(json)).toJson());
            case STATS -> Answer.reply(stats().toJson());
            case VIEWS -> Answer.reply(views(ViewsRequest.fromJson(json)).toJson());
        };
    }

    /** A request for another stage or rank reached this one: refuse it rather than act on the wrong GPU. */
    private void checkRank(RequestBody body) {
        JsonObject json = body.json();
        if (json.containsKey(RequestFields.PP) && body.requireInt(RequestFields.PP, 0, Integer.MAX_VALUE) != config.pp()) {
            throw new IllegalArgumentException("the request is for pp" + json.getValue(RequestFields.PP) + " but reached " + rank);
        }
        if (json.containsKey(RequestFields.TP) && body.requireInt(RequestFields.TP, 0, Integer.MAX_VALUE) != config.tp()) {
            throw new IllegalArgumentException("the request is for tp" + json.getValue(RequestFields.TP) + " but reached " + rank);
        }
    }

    /** The group a failure's text names: the request's, when it is a valid group id; its record refuses any other. */
    private static int groupOf(JsonObject json) {
        Object group = json.getValue(RequestFields.GROUP);
        return (group instanceof Integer || group instanceof Long) && ((Number) group).longValue() >= 0
                && ((Number) group).longValue() <= Integer.MAX_VALUE ? ((Number) group).intValue() : -1;
    }

    /**
     * Map, unmap and release-pages: a repeated requestId gets the first answer and changes nothing. Only a request
     * that names a group with tensors and valid page ids is remembered, and by what it asks (action,
     * group, pages), so that an answer kept is small whatever else a sender put in the body: a
     * hostile sender cannot make the bounded cache hold its oversized ids and arrays. A request
     * refused before that changed nothing; retried, it is judged afresh.
     */
    private Answer once(WorkerAction action, JsonObject json, Request request) {
        // a request with no valid requestId is refused before its group is read, and its text names none
        new RequestBody(json).requireId(RequestFields.REQUEST_ID, MAX_REQUEST_ID);
        request.group = groupOf(json);
        PagesRequest pagesRequest = PagesRequest.fromJson(action, json, group -> tensors(group).geometry().pages());
        int group = pagesRequest.group();
        GroupTensors tensors = groups.get(group);
        int[] pages = pagesRequest.pages();
        requireOwned(group, pagesRequest.owner());
        JsonObject fingerprint = new JsonObject().put(WorkerAction.HEADER, action.wireName()).put(RequestFields.GROUP, group)
                .put(RequestFields.PAGES, RequestFields.pageArray(pages));
        String requestId = pagesRequest.requestId();
        Answer first = answers.answered(requestId, fingerprint);
        if (first != null) {
            return first;
        }
        Answer answer;
        try {
            PagesReply reply = switch (action) {
                case MAP -> map(tensors, pages);
                case UNMAP -> unmap(tensors, pages);
                default -> release(tensors, pages);
            };
            answer = Answer.reply(reply.toJson());
        } catch (Throwable e) {
            answer = failure(request, e);
        }
        answers.remember(requestId, fingerprint, answer);
        return answer;
    }

    private CreateTensorsReply createTensors(CreateTensorsRequest request) {
        int group = request.group();
        Owner owner = request.owner();
        Geometry geometry = request.geometry();
        boolean zeroPage = request.zeroPage();
        HandlePoolOptions poolOptions = request.handlePoolOrDefaults();
        if (owners.retired(owner)) {
            // a coordinator displaced while it ran (paused, partitioned) must not take its group back
            // from the owner after it: it comes back as a new incarnation
            throw new RankException(FailureCode.CONFLICT, "owner " + owner + " lost group " + group + " here to a newer owner"
                    + " and cannot claim it again; a new owner incarnation claims it with create-tensors");
        }
        long newer = owners.supersededBy(group, owner);
        if (newer >= 0) {
            // an older incarnation of a coordinator whose node has claimed the group since (its start or
            // rejoin outlived its displacement) must not take it from the newer one
            throw new RankException(FailureCode.CONFLICT, "owner " + owner + " is older than owner epoch " + newer
                    + " of the same node, which claimed group " + group + " here since; an older incarnation never claims it again");
        }
        GroupTensors existing = groups.get(group);
        CreateTensorsReply.Reclaimed reclaimed = null;
        if (existing != null && !owner.equals(owners.owner(group))) {
            // the new geometry must suit the device before the old owner's tensors go
            geometry.requireGranularity(device.granularity());
            Owner previous = owners.owner(group);
            reclaimed = reclaim(group, "claimed by " + owner);
            if (previous != null) {
                owners.retire(previous);
            }
            existing = null;
        }
        if (existing != null && owners.isLapsing(group) && existing.sameAs(geometry, zeroPage, poolOptions)) {
            // its owner, whose node this rank saw leave, creates the tensors again: it lost sight of this
            // rank too (a pause, a partition) and maps every page it holds afresh, so the group starts empty
            reclaimed = reclaim(group, "created again by its owner, whose node this rank had seen leave");
            existing = null;
        }
        GroupTensors tensors = existing;
        if (existing != null) {
            if (!existing.sameAs(geometry, zeroPage, poolOptions)) {
                throw new RankException(FailureCode.CONFLICT, "tensors already exist with " + existing.geometry()
                        + (existing.zeroPage() ? " and a zero page" : "") + ", handlePool " + HandlePoolJson.toJson(existing.poolOptions()).encode()
                        + "; destroy-tensors first to change them");
            }
        } else {
            tensors = GroupTensors.create(device, handles, group, geometry, zeroPage, poolOptions);
            groups.put(group, tensors);
            owners.claim(group, owner);
            LOG.info("{} group {}: tensors created for {}, {}{}, handle pool {}", rank, group, owner, geometry,
                    zeroPage ? " with a zero page" : "", HandlePoolJson.toJson(poolOptions).encode());
        }
        // what the coordinator's GPU budget needs: which GPU, how much of it kvpager may take, and
        // what the group holds besides its pages
        long budget = config.gpuBudgetBytes(device.memoryInfo().totalBytes(), device.granularity());
        return new CreateTensorsReply(group, device.granularity(), gpu.toString(), budget,
                tensors.standingBytes(), reclaimed);
    }

    /**
     * Whether the group's tensors exist here, and belong to the request's owner when it names one;
     * for that owner, the lease it holds from now: the coordinator's check that it still owns the group.
     * In a cluster it also names the group's owner here and says whether that owner's node and the
     * asker's are members as this rank sees the cluster: what a displaced coordinator needs to know
     * before it claims the group again ({@link TensorsCreatedReply}).
     */
    private Answer tensorsCreated(TensorsCreatedRequest request) {
        int group = request.group();
        Owner owner = request.owner();
        Owner holder = groups.containsKey(group) ? owners.owner(group) : null;
        boolean created = groups.containsKey(group) && (owner == null || owner.equals(holder));
        TensorsCreatedReply reply = departures == NodeDepartures.NONE ? new TensorsCreatedReply(created)
                : new TensorsCreatedReply(created, holder, holder == null ? null : departures.present(holder.nodeId()),
                        owner == null ? null : departures.present(owner.nodeId()));
        Answer answer = Answer.reply(reply.toJson());
        return created && owner != null ? withLease(answer, group) : answer;
    }

    /**
     * A successful answer to the group's owner, with the lease the owner holds from now
     * ({@link WorkerProtocol#LEASE_MS}), counted afresh for every answer, a repeated one too;
     * a failure, or an answer outside a cluster, as it is.
     */
    private Answer withLease(Answer answer, int group) {
        long leaseMs = owners.leaseMs(group);
        if (answer.failed() || leaseMs < 0) {
            return answer;
        }
        return Answer.reply(answer.body().copy().put(WorkerProtocol.LEASE_MS, leaseMs));
    }

    /**
     * Unmaps and releases everything of {@code group} (handles back to the pool, or the driver past
     * its bound), frees its ranges and forgets its owner. A driver failure leaves the group with
     * its owner; destroying it again carries on where this stopped.
     *
     * @return what was reclaimed: the previous owner, the pages that held memory and their bytes
     */
    private CreateTensorsReply.Reclaimed reclaim(int group, String why) {
        GroupTensors tensors = groups.get(group);
        Owner previous = owners.owner(group);
        int pages = tensors.heldPages();
        long bytes = tensors.heldBytes();
        tensors.destroy();
        groups.remove(group);
        owners.forget(group);
        LOG.warn("{} group {}: reclaimed from owner {} ({}): {} pages, {} bytes released", rank, group, previous, why, pages, bytes);
        return new CreateTensorsReply.Reclaimed(String.valueOf(previous), pages, bytes);
    }

    /** The lease of {@code owner} on {@code group} ended and nobody claimed it: give its memory back. */
    private void leaseEnded(int group, Owner owner) {
        if (stopping || !groups.containsKey(group)) {
            return;
        }
        try {
            reclaim(group, "its node left the cluster " + config.leaseGraceMs() + " ms ago and no new owner claimed it");
        } catch (RuntimeException e) {
            LOG.error("{} group {}: releasing what owner {} left failed: {}; a new owner's create-tensors tries again", rank, group,
                    owner, RankException.of(e).getMessage());
        }
    }

    /** Refuses a request from anyone but the group's owner: it would change another coordinator's pages. */
    private void requireOwned(int group, Owner owner) {
        Owner current = owners.owner(group);
        if (!owner.equals(current)) {
            throw new RankException(FailureCode.CONFLICT, "owned by " + current + ", not by " + owner
                    + ", the request's owner; a new owner claims the group with create-tensors");
        }
    }

    /** Sets the idle handles the owner's group keeps on top of its pool options (raised only once the owner's budget counts them). */
    private KeepHandlesReply keepHandles(KeepHandlesRequest request) {
        GroupTensors tensors = tensors(request.group());
        requireOwned(request.group(), request.owner());
        tensors.keepIdle(request.idlePages());
        return new KeepHandlesReply(tensors.idlePages(), handles.idleHandles());
    }

    private static PagesReply map(GroupTensors tensors, int[] pages) {
        tensors.map(pages);
        return PagesReply.mapped(pages);
    }

    private static PagesReply unmap(GroupTensors tensors, int[] pages) {
        tensors.unmap(pages);
        return PagesReply.unmapped(pages);
    }

    /** {@code released}: the pages that held memory here; {@code clean}: every listed page, now unmapped. */
    private static PagesReply release(GroupTensors tensors, int[] pages) {
        return PagesReply.released(tensors.release(pages), pages);
    }

    private DestroyTensorsReply destroyTensors(DestroyTensorsRequest request) {
        int group = request.group();
        Owner owner = request.owner();
        GroupTensors tensors = groups.get(group);
        if (tensors == null) {
            return new DestroyTensorsReply(false);
        }
        requireOwned(group, owner);
        tensors.destroy();
        groups.remove(group);
        owners.forget(group);
        LOG.info("{} group {}: tensors destroyed", rank, group);
        return new DestroyTensorsReply(true);
    }

    private ViewsReply views(ViewsRequest request) {
        GroupTensors tensors = tensors(request.group());
        return new ViewsReply(TensorView.of(tensors.geometry(), tensors.rangeBases()));
    }

    private StatsReply stats() {
        Map<Integer, GroupStats> perGroup = new TreeMap<>();
        int held = 0;
        for (Map.Entry<Integer, GroupTensors> entry : groups.entrySet()) {
            perGroup.put(entry.getKey(), GroupStats.fromJson(TensorsJson.stats(entry.getValue())
                    .put(GroupStats.OWNER, String.valueOf(owners.owner(entry.getKey())))));
            held += entry.getValue().handles();
        }
        List<HandlePoolStats> pools = new ArrayList<>();
        for (Object pool : TensorsJson.stats(handles)) {
            pools.add(HandlePoolStats.fromJson((JsonObject) pool));
        }
        int pooled = handles.idleHandles();
        MemoryInfo memory = device.memoryInfo();
        // idle handles hold device memory: used, not free, for any accounting; lapsing leases are
        // groups whose owner's node left, released when their grace period ends
        return new StatsReply(rank, device.describe(), gpu.toString(), Thread.currentThread().getName(), perGroup,
                held + pooled, pooled, handles.idleBytes(), pools, owners.lapsing(), memory.usedBytes(), memory.freeBytes(),
                memory.totalBytes());
    }

    private GroupTensors tensors(int group) {
        GroupTensors tensors = groups.get(group);
        if (tensors == null) {
            throw new RankException(FailureCode.NO_TENSORS, "no tensors on this rank; send create-tensors first");
        }
        return tensors;
    }

    private Answer failure(Request request, Throwable error) {
        RankException failure = RankException.of(error);
        String name = rank == null ? "worker" : rank;
        String text = failure.text(name, request.group);
        // the action header is the sender's text: cut, so an 8 KB name does not fill the log
        String action = WireText.cut(request.action);
        if (failure.unexpected()) {
            LOG.error("{} failed with {}: {}", action, failure.code().code(), text, failure.getCause());
        } else if (failure.code() == FailureCode.OUT_OF_MEMORY || failure.code() == FailureCode.STOPPING) {
            // Upstream an out-of-memory is an allocation miss the engine preempts on, and the coordinator
            // counts it; a request refused because this worker is stopping is part of a clean stop
            // (SIGTERM), which the sender hears as 503: neither means something is wrong here.
            LOG.info("{} failed with {}: {}", action, failure.code().code(), text);
        } else {
            LOG.warn("{} failed with {}: {}", action, failure.code().code(), text);
        }
        return Answer.failure(new io.kvpager.cache.RankFailure(name, failure.code(), text, request.group, failure.page(),
                failure.driverError(), failure.rollbackComplete(), failure.unrestoredPages()));
    }
}

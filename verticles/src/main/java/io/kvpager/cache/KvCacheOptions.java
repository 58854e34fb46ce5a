package io.kvpager.cache;

import io.kvpager.Geometry;
import io.kvpager.KvFormat;
import io.kvpager.Layout;
import io.kvpager.device.HandlePoolOptions;
import io.kvpager.internal.options.OptionReader;
import io.kvpager.internal.options.OptionRules;
import io.kvpager.internal.options.OptionSources;
import io.kvpager.internal.options.OptionTable;
import io.kvpager.internal.options.OptionType;
import io.kvpager.sim.SimOptions;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import static io.kvpager.internal.options.OptionType.BOOL;
import static io.kvpager.internal.options.OptionType.INT;
import static io.kvpager.internal.options.OptionType.INT_LIST;
import static io.kvpager.internal.options.OptionType.LONG;
import static io.kvpager.internal.options.OptionType.OBJECT;
import static io.kvpager.internal.options.OptionType.SIM;
import static io.kvpager.internal.options.OptionType.STRING;

/**
 * Everything a {@link KvCache} needs: which pool it serves ({@code instance}, {@code tp},
 * {@code pp}, the {@code stages} its pages span, its {@code group}), the pool's geometry, timeouts,
 * the reserve's marks, an optional memory limit, and whether to run the ranks' workers in this
 * Vert.x instance.
 *
 * <p>A data object: built fluently in code, from a {@link JsonObject}, or read by
 * {@link #load(Vertx, String)} from a JSON file with environment and system-property overrides.
 * Each setter rejects a bad value at once with an {@link IllegalArgumentException} naming the
 * field; {@link #validate()} checks what needs several fields together (stages within {@code pp},
 * the geometry, {@code reserveLow <= reserveHigh}), and {@link KvCache#deploy} calls it.
 */
@DataObject
public class KvCacheOptions {

    public static final int DEFAULT_KV_BUFFERS = 2;
    public static final long DEFAULT_PAGE_BYTES = Geometry.DEFAULT_PAGE_BYTES;
    public static final Layout DEFAULT_LAYOUT = Layout.PAGE_MAJOR;
    public static final long DEFAULT_SEND_TIMEOUT_MS = 60_000;
    public static final long DEFAULT_TENSORS_DEADLINE_MS = 30_000;
    public static final long DEFAULT_TENSORS_POLL_MS = 50;
    public static final int DEFAULT_RESERVE_LOW = 1;
    public static final int DEFAULT_RESERVE_HIGH = 4;
    public static final boolean DEFAULT_ADAPTIVE_RESERVE = true;
    public static final long DEFAULT_REFILL_INTERVAL_MS = 10;
    /** The most page ids' worth of unmapped handles the ranks keep idle for a churning pool, by default. */
    public static final int DEFAULT_IDLE_HANDLE_PAGES = 16;
    public static final long DEFAULT_IDLE_HANDLE_MS = 1_000;
    public static final String DEFAULT_DEVICE = "sim";
    /** How long an engine has to give back what a {@link Reclaim} asks, by default. */
    public static final long DEFAULT_RECLAIM_DEADLINE_MS = 250;

    private static final Pattern RANK_NAME = Pattern.compile("pp(\\d+)/tp(\\d+)");
    private static final List<String> HANDLE_POOL_KEYS = List.of("prefillPages", "boundPages");
    private static final OptionType<HandlePoolOptions> HANDLE_POOL = OBJECT.as(KvCacheOptions::handlePoolOf,
            pool -> new JsonObject().put("prefillPages", pool.prefillPages()).put("boundPages", pool.boundPages()));
    private static final OptionType<Map<String, Integer>> GPUS = OBJECT.as(KvCacheOptions::gpusOf,
            gpus -> new JsonObject(new LinkedHashMap<>(gpus)));

    /**
     * Every option: its JSON key and type, its getter and setter (which holds its rule), whether
     * JSON {@code null} unsets it; the JSON constructor, {@link #toJson()} and the environment's
     * and system properties' names ({@link #load}) all read this table.
     */
    private static final OptionTable<KvCacheOptions> OPTIONS = OptionTable.<KvCacheOptions>of("option", OptionTable.MUST_NOT_BE_NULL)
            .add("instance", STRING, KvCacheOptions::getInstance, KvCacheOptions::setInstance)
            .add("tp", INT, KvCacheOptions::getTp, KvCacheOptions::setTp)
            .add("pp", INT, KvCacheOptions::getPp, KvCacheOptions::setPp)
            .unsettable("stages", INT_LIST, o -> o.stages, KvCacheOptions::setStages)
            .add("group", INT, KvCacheOptions::getGroup, KvCacheOptions::setGroup)
            .add("layers", INT, KvCacheOptions::getLayers, KvCacheOptions::setLayers)
            .add("kvBuffers", INT, KvCacheOptions::getKvBuffers, KvCacheOptions::setKvBuffers)
            .add("blockBytes", LONG, KvCacheOptions::getBlockBytes, KvCacheOptions::setBlockBytes)
            .add("pageBytes", LONG, KvCacheOptions::getPageBytes, KvCacheOptions::setPageBytes)
            .add("pages", INT, KvCacheOptions::getPages, KvCacheOptions::setPages)
            .add("layout", STRING.as((field, name) -> layoutOf(name), Layout::name), KvCacheOptions::getLayout, KvCacheOptions::setLayout)
            .add("kvDtype", STRING.as((field, name) -> KvFormat.parse(name), KvFormat::optionName), KvCacheOptions::getKvDtype,
                    KvCacheOptions::setKvDtype)
            .add("zeroPage", BOOL, KvCacheOptions::isZeroPage, KvCacheOptions::setZeroPage)
            .add("sendTimeoutMs", LONG, KvCacheOptions::getSendTimeoutMs, KvCacheOptions::setSendTimeoutMs)
            .add("tensorsDeadlineMs", LONG, KvCacheOptions::getTensorsDeadlineMs, KvCacheOptions::setTensorsDeadlineMs)
            .add("tensorsPollMs", LONG, KvCacheOptions::getTensorsPollMs, KvCacheOptions::setTensorsPollMs)
            .add("reserveLow", INT, KvCacheOptions::getReserveLow, KvCacheOptions::setReserveLow)
            .add("reserveHigh", INT, KvCacheOptions::getReserveHigh, KvCacheOptions::setReserveHigh)
            .add("adaptiveReserve", BOOL, KvCacheOptions::isAdaptiveReserve, KvCacheOptions::setAdaptiveReserve)
            .add("refillIntervalMs", LONG, KvCacheOptions::getRefillIntervalMs, KvCacheOptions::setRefillIntervalMs)
            .add("idleHandlePages", INT, KvCacheOptions::getIdleHandlePages, KvCacheOptions::setIdleHandlePages)
            .add("idleHandleMs", LONG, KvCacheOptions::getIdleHandleMs, KvCacheOptions::setIdleHandleMs)
            .unsettable("memoryLimitBytes", LONG, KvCacheOptions::getMemoryLimitBytes, KvCacheOptions::setMemoryLimitBytes)
            .add("lazyStart", BOOL, KvCacheOptions::isLazyStart, KvCacheOptions::setLazyStart)
            .add("localWorkers", BOOL, KvCacheOptions::isLocalWorkers, KvCacheOptions::setLocalWorkers)
            .add("device", STRING, KvCacheOptions::getDevice, KvCacheOptions::setDevice)
            .add("gpus", GPUS, KvCacheOptions::getGpus, KvCacheOptions::setGpus)
            .add("sim", SIM, KvCacheOptions::getSim, KvCacheOptions::setSim)
            .unsettable("gpuMemoryPercent", INT, KvCacheOptions::getGpuMemoryPercent, KvCacheOptions::setGpuMemoryPercent)
            .unsettable("handlePool", HANDLE_POOL, KvCacheOptions::getHandlePool, KvCacheOptions::setHandlePool)
            .unsettable("guaranteeBytes", LONG, KvCacheOptions::getGuaranteeBytes, KvCacheOptions::setGuaranteeBytes)
            .unsettable("guaranteePercent", INT, KvCacheOptions::getGuaranteePercent, KvCacheOptions::setGuaranteePercent)
            .add("reclaimDeadlineMs", LONG, KvCacheOptions::getReclaimDeadlineMs, KvCacheOptions::setReclaimDeadlineMs);

    private String instance;
    private int tp = 1;
    private int pp = 1;
    private List<Integer> stages;
    private int group;
    private int layers;
    private int kvBuffers = DEFAULT_KV_BUFFERS;
    private long blockBytes;
    private long pageBytes = DEFAULT_PAGE_BYTES;
    private int pages;
    private Layout layout = DEFAULT_LAYOUT;
    private KvFormat kvDtype = KvFormat.BF16;
    private boolean zeroPage;
    private long sendTimeoutMs = DEFAULT_SEND_TIMEOUT_MS;
    private long tensorsDeadlineMs = DEFAULT_TENSORS_DEADLINE_MS;
    private long tensorsPollMs = DEFAULT_TENSORS_POLL_MS;
    private int reserveLow = DEFAULT_RESERVE_LOW;
    private int reserveHigh = DEFAULT_RESERVE_HIGH;
    private boolean adaptiveReserve = DEFAULT_ADAPTIVE_RESERVE;
    private long refillIntervalMs = DEFAULT_REFILL_INTERVAL_MS;
    private int idleHandlePages = DEFAULT_IDLE_HANDLE_PAGES;
    private long idleHandleMs = DEFAULT_IDLE_HANDLE_MS;
    private Long memoryLimitBytes;
    private boolean lazyStart;
    private boolean localWorkers;
    private String device = DEFAULT_DEVICE;
    private Map<String, Integer> gpus = Map.of();
    private SimOptions sim = SimOptions.defaults();
    private Integer gpuMemoryPercent;
    private HandlePoolOptions handlePool;
    private Long guaranteeBytes;
    private Integer guaranteePercent;
    private long reclaimDeadlineMs = DEFAULT_RECLAIM_DEADLINE_MS;

    public KvCacheOptions() {
    }

    public KvCacheOptions(KvCacheOptions other) {
        this(other.toJson());
    }

    /**
     * Reads options from JSON. Unknown keys and mistyped values are rejected with the field's
     * name; missing keys keep their defaults. JSON {@code null} unsets an optional field
     * ({@code stages}, {@code memoryLimitBytes}, {@code handlePool}, {@code gpuMemoryPercent},
     * {@code guaranteeBytes}, {@code guaranteePercent}).
     */
    public KvCacheOptions(JsonObject json) {
        OPTIONS.read(this, json);
    }

    /**
     * Reads options through vertx-config: the JSON file at {@code path}, then environment
     * variables {@code KVPAGER_<FIELD>} (upper snake case: {@code KVPAGER_TP},
     * {@code KVPAGER_SEND_TIMEOUT_MS}, {@code KVPAGER_SIM='{"latency":true}'}), then system
     * properties {@code kvpager.<field>} ({@code -Dkvpager.tp=4}, {@code -Dkvpager.sim.latency=true}),
     * each overriding the one before. The result is {@link #validate() validated}.
     *
     * @param path a JSON file, or {@code null} to read only the environment and system properties
     */
    public static Future<KvCacheOptions> load(Vertx vertx, String path) {
        return load(vertx, path, new JsonObject());
    }

    /**
     * As {@link #load(Vertx, String)}, with {@code overrides} (option fields, e.g. a command line's
     * flags) on top of every layer, before the result is validated.
     */
    public static Future<KvCacheOptions> load(Vertx vertx, String path, JsonObject overrides) {
        return OptionSources.load(vertx, path, overrides, OPTIONS, json -> new KvCacheOptions(json).validate());
    }

    public JsonObject toJson() {
        return OPTIONS.toJson(this);
    }

    /**
     * Checks what one setter cannot: required fields, stages within {@code pp}, the geometry,
     * the reserve marks against each other and the pool, the poll period against the deadline,
     * and the GPU mapping against the pool's ranks.
     *
     * @return this
     * @throws IllegalArgumentException naming the field
     */
    public KvCacheOptions validate() {
        if (instance == null) {
            throw new IllegalArgumentException("instance is required: the cache's name in event-bus addresses");
        }
        if (layers == 0) {
            throw new IllegalArgumentException("layers is required");
        }
        if (blockBytes == 0) {
            throw new IllegalArgumentException("blockBytes is required");
        }
        if (pages == 0) {
            throw new IllegalArgumentException("pages is required: the pool's virtual page ids");
        }
        for (int stage : getStages()) {
            if (stage >= pp) {
                throw new IllegalArgumentException("stages: stage " + stage + " is outside 0.." + (pp - 1) + " for pp=" + pp);
            }
        }
        Geometry geometry = geometry();
        if (reserveLow > reserveHigh) {
            throw new IllegalArgumentException("reserveLow (" + reserveLow + ") must not exceed reserveHigh (" + reserveHigh + ")");
        }
        if (reserveHigh > geometry.pages()) {
            throw new IllegalArgumentException("reserveHigh (" + reserveHigh + ") must not exceed pages (" + geometry.pages() + ")");
        }
        if (handlePool != null) {
            if (handlePool.boundPages() > geometry.pages()) {
                throw new IllegalArgumentException("handlePool.boundPages (" + handlePool.boundPages()
                        + ") must not exceed pages (" + geometry.pages() + ")");
            }
            handlePool.requireFits(geometry);
        }
        if (tensorsPollMs > tensorsDeadlineMs) {
            throw new IllegalArgumentException("tensorsPollMs (" + tensorsPollMs + ") must not exceed tensorsDeadlineMs ("
                    + tensorsDeadlineMs + ")");
        }
        for (String rank : gpus.keySet()) {
            var m = RANK_NAME.matcher(rank);
            m.matches();
            int rankPp = Integer.parseInt(m.group(1));
            int rankTp = Integer.parseInt(m.group(2));
            if (!getStages().contains(rankPp) || rankTp >= tp) {
                throw new IllegalArgumentException("gpus: rank " + rank + " is not a rank of this pool (stages "
                        + getStages() + ", tp " + tp + ")");
            }
        }
        return this;
    }

    /** The pool's geometry; throws {@link IllegalArgumentException} naming the field that does not fit. */
    public Geometry geometry() {
        return new Geometry(layers, kvBuffers, blockBytes, pageBytes, pages, layout);
    }

    /** The GPU index of rank {@code (pp, tp)}: the {@code gpus} entry, else {@code stage × tp + tpRank}. */
    public int gpuOf(int ppRank, int tpRank) {
        String rank = "pp" + ppRank + "/tp" + tpRank;
        return gpus.getOrDefault(rank, ppRank * tp + tpRank);
    }

    public String getInstance() {
        return instance;
    }

    /** The cache's name; part of every event-bus address, so letters, digits, '-' and '_' only. */
    public KvCacheOptions setInstance(String instance) {
        this.instance = OptionRules.instanceName("instance", instance);
        return this;
    }

    public int getTp() {
        return tp;
    }

    /** Tensor-parallel size: every page is mapped on this many ranks of each stage. */
    public KvCacheOptions setTp(int tp) {
        this.tp = OptionRules.atLeast("tp", tp, 1);
        return this;
    }

    public int getPp() {
        return pp;
    }

    /** Pipeline-parallel size of the model. */
    public KvCacheOptions setPp(int pp) {
        this.pp = OptionRules.atLeast("pp", pp, 1);
        return this;
    }

    /** The pp stages this cache's pool spans: the explicit list, else every stage {@code 0..pp-1}. */
    public List<Integer> getStages() {
        if (stages != null) {
            return List.copyOf(stages);
        }
        List<Integer> all = new ArrayList<>(pp);
        for (int s = 0; s < pp; s++) {
            all.add(s);
        }
        return List.copyOf(all);
    }

    /** The pp stages this cache's pool spans, listed explicitly; {@code null} means all of them. */
    public KvCacheOptions setStages(List<Integer> stages) {
        if (stages == null) {
            this.stages = null;
            return this;
        }
        if (stages.isEmpty()) {
            throw new IllegalArgumentException("stages must name at least one pp stage (leave it unset for all stages)");
        }
        Set<Integer> seen = new HashSet<>();
        for (Integer stage : stages) {
            if (stage == null || stage < 0) {
                throw new IllegalArgumentException("stages must be pp stage numbers >= 0, got " + stages);
            }
            if (!seen.add(stage)) {
                throw new IllegalArgumentException("stages lists stage " + stage + " twice: " + stages);
            }
        }
        this.stages = List.copyOf(stages);
        return this;
    }

    public int getGroup() {
        return group;
    }

    /** The KV group (full attention, sliding window, ...) this cache's pool holds. */
    public KvCacheOptions setGroup(int group) {
        this.group = OptionRules.atLeast("group", group, 0);
        return this;
    }

    public int getLayers() {
        return layers;
    }

    public KvCacheOptions setLayers(int layers) {
        this.layers = OptionRules.atLeast("layers", layers, 1);
        return this;
    }

    public int getKvBuffers() {
        return kvBuffers;
    }

    /** 2 for separate K and V buffers, 1 for MLA. */
    public KvCacheOptions setKvBuffers(int kvBuffers) {
        this.kvBuffers = OptionRules.atLeast("kvBuffers", kvBuffers, 1);
        return this;
    }

    public long getBlockBytes() {
        return blockBytes;
    }

    /** Bytes of one block of one layer and buffer. */
    public KvCacheOptions setBlockBytes(long blockBytes) {
        this.blockBytes = OptionRules.atLeast("blockBytes", blockBytes, 1);
        return this;
    }

    public long getPageBytes() {
        return pageBytes;
    }

    /** Bytes of one page of one layer and buffer; a multiple of the driver granularity (2 MiB). */
    public KvCacheOptions setPageBytes(long pageBytes) {
        this.pageBytes = OptionRules.atLeast("pageBytes", pageBytes, 1);
        return this;
    }

    public int getPages() {
        return pages;
    }

    /** Virtual page ids of the pool. */
    public KvCacheOptions setPages(int pages) {
        this.pages = OptionRules.atLeast("pages", pages, 1);
        return this;
    }

    public Layout getLayout() {
        return layout;
    }

    public KvCacheOptions setLayout(Layout layout) {
        if (layout == null) {
            throw new IllegalArgumentException("layout must be PAGE_MAJOR or PER_LAYER, got null");
        }
        this.layout = layout;
        return this;
    }

    public KvFormat getKvDtype() {
        return kvDtype;
    }

    /**
     * How the engine stores K and V in the blocks ({@code bf16}, the default, or {@code fp8}: e4m3
     * with a scale per token and KV head, {@link KvFormat}): {@code blockBytes} is sized for it
     * ({@link KvFormat#blockBytes}), so an fp8 page holds about twice the tokens of a bf16 one.
     */
    public KvCacheOptions setKvDtype(KvFormat kvDtype) {
        if (kvDtype == null) {
            throw new IllegalArgumentException("kvDtype must be bf16 or fp8, got null");
        }
        this.kvDtype = kvDtype;
        return this;
    }

    public boolean isZeroPage() {
        return zeroPage;
    }

    /** Whether ranks zero a page's memory when they map it. */
    public KvCacheOptions setZeroPage(boolean zeroPage) {
        this.zeroPage = zeroPage;
        return this;
    }

    public long getSendTimeoutMs() {
        return sendTimeoutMs;
    }

    /** How long the coordinator waits for one rank's answer before failing it as a timeout. */
    public KvCacheOptions setSendTimeoutMs(long sendTimeoutMs) {
        this.sendTimeoutMs = OptionRules.atLeast("sendTimeoutMs", sendTimeoutMs, 1);
        return this;
    }

    public long getTensorsDeadlineMs() {
        return tensorsDeadlineMs;
    }

    /** Wall-clock time the start may take until every rank has created its tensors. */
    public KvCacheOptions setTensorsDeadlineMs(long tensorsDeadlineMs) {
        this.tensorsDeadlineMs = OptionRules.atLeast("tensorsDeadlineMs", tensorsDeadlineMs, 1);
        return this;
    }

    public long getTensorsPollMs() {
        return tensorsPollMs;
    }

    /** Period of the timer that asks the ranks whether their tensors exist. */
    public KvCacheOptions setTensorsPollMs(long tensorsPollMs) {
        this.tensorsPollMs = OptionRules.atLeast("tensorsPollMs", tensorsPollMs, 1);
        return this;
    }

    public int getReserveLow() {
        return reserveLow;
    }

    /** The reserve of mapped idle pages is refilled when it falls below this many pages. */
    public KvCacheOptions setReserveLow(int reserveLow) {
        this.reserveLow = OptionRules.atLeast("reserveLow", reserveLow, 0);
        return this;
    }

    public int getReserveHigh() {
        return reserveHigh;
    }

    /** A refill maps the reserve up to this many pages; idle pages above it are unmapped. */
    public KvCacheOptions setReserveHigh(int reserveHigh) {
        this.reserveHigh = OptionRules.atLeast("reserveHigh", reserveHigh, 0);
        return this;
    }

    public boolean isAdaptiveReserve() {
        return adaptiveReserve;
    }

    /** Whether the marks follow the recent page consumption rate. */
    public KvCacheOptions setAdaptiveReserve(boolean adaptiveReserve) {
        this.adaptiveReserve = adaptiveReserve;
        return this;
    }

    public long getRefillIntervalMs() {
        return refillIntervalMs;
    }

    /** Period of the background task that refills the reserve and releases reclaimed pages. */
    public KvCacheOptions setRefillIntervalMs(long refillIntervalMs) {
        this.refillIntervalMs = OptionRules.atLeast("refillIntervalMs", refillIntervalMs, 1);
        return this;
    }

    public int getIdleHandlePages() {
        return idleHandlePages;
    }

    /**
     * The most page ids' worth of unmapped handles each rank keeps idle for this pool while its
     * pages churn, so that a page id mapped again soon after an unmap needs no {@code cuMemCreate}
     * and the unmap no {@code cuMemRelease}. The ranks keep as many as the largest unmap of the
     * last {@link #setIdleHandleMs period} asked for, up to this; the GPU's budget counts them as
     * the pool's, and they are given back when the churn stops or another pool needs the memory.
     * 0 keeps none. At most the pages the handle pool's {@code boundPages} leaves.
     */
    public KvCacheOptions setIdleHandlePages(int idleHandlePages) {
        this.idleHandlePages = OptionRules.atLeast("idleHandlePages", idleHandlePages, 0);
        return this;
    }

    public long getIdleHandleMs() {
        return idleHandleMs;
    }

    /** How long the ranks keep idle handles that no unmap of that period needed ({@link #setIdleHandlePages}). */
    public KvCacheOptions setIdleHandleMs(long idleHandleMs) {
        this.idleHandleMs = OptionRules.atLeast("idleHandleMs", idleHandleMs, 1);
        return this;
    }

    /** The share of each GPU the local workers let kvpager take, or {@code null} for the device's default. */
    public Integer getGpuMemoryPercent() {
        return gpuMemoryPercent;
    }

    /**
     * The share of each GPU's memory, 1 to 100 %, that kvpager's caches may take between them, for
     * the local workers ({@link io.kvpager.worker.RankWorkerOptions#setGpuMemoryPercent}, where the
     * defaults are: 90 % on {@code cuda}, 100 % on {@code sim}); {@code null} for the default.
     * Workers deployed on their own take theirs from their own options.
     */
    public KvCacheOptions setGpuMemoryPercent(Integer gpuMemoryPercent) {
        this.gpuMemoryPercent = gpuMemoryPercent == null ? null : OptionRules.percent("gpuMemoryPercent", gpuMemoryPercent);
        return this;
    }

    /** The pool's guaranteed share of each GPU's budget in bytes, or {@code null}: see {@link #setGuaranteeBytes}. */
    public Long getGuaranteeBytes() {
        return guaranteeBytes;
    }

    /**
     * The pool's guaranteed share of the budget of each GPU its ranks run on, in bytes over all its
     * ranks on that GPU, or {@code null} for none set. Up to its guarantee a pool gets its memory
     * back from pools that borrowed beyond theirs ({@link Reclaim}); beyond it, it borrows what is
     * free. At most one of this and {@link #setGuaranteePercent} is set; with neither, the pool's
     * guarantee is an equal split of what the set guarantees leave, among the caches on that GPU
     * that set none, recomputed as caches come and go (docs/sharing.md).
     *
     * @throws IllegalArgumentException for a negative value, or when a guarantee percent is set
     */
    public KvCacheOptions setGuaranteeBytes(Long guaranteeBytes) {
        if (guaranteeBytes != null) {
            OptionRules.atLeast("guaranteeBytes", guaranteeBytes, 0L);
            if (guaranteePercent != null) {
                throw new IllegalArgumentException("guaranteeBytes (" + guaranteeBytes + ") and guaranteePercent ("
                        + guaranteePercent + ") are both set: set at most one of them");
            }
        }
        this.guaranteeBytes = guaranteeBytes;
        return this;
    }

    /** The pool's guaranteed share of each GPU's budget in percent, or {@code null}: see {@link #setGuaranteePercent}. */
    public Integer getGuaranteePercent() {
        return guaranteePercent;
    }

    /**
     * The pool's guaranteed share of the budget of each GPU its ranks run on, 0 to 100 % of that
     * budget, or {@code null} for none set (see {@link #setGuaranteeBytes}). 0 on every cache of a GPU
     * is first-come sharing: no pool is guaranteed anything, and none is ever asked to give back.
     *
     * @throws IllegalArgumentException for a value outside 0..100, or when guarantee bytes are set
     */
    public KvCacheOptions setGuaranteePercent(Integer guaranteePercent) {
        if (guaranteePercent != null) {
            OptionRules.inRange("guaranteePercent", guaranteePercent, 0, 100);
            if (guaranteeBytes != null) {
                throw new IllegalArgumentException("guaranteePercent (" + guaranteePercent + ") and guaranteeBytes ("
                        + guaranteeBytes + ") are both set: set at most one of them");
            }
        }
        this.guaranteePercent = guaranteePercent;
        return this;
    }

    public long getReclaimDeadlineMs() {
        return reclaimDeadlineMs;
    }

    /**
     * How long this pool's engine has to give back what a {@link Reclaim} asks of it (1 ms to one
     * hour), before the pool is capped at its guarantee: no memory above it until it is under it.
     * An allocation of another pool, waiting for memory reclaimed from this one, waits as long
     * (docs/sharing.md).
     */
    public KvCacheOptions setReclaimDeadlineMs(long reclaimDeadlineMs) {
        this.reclaimDeadlineMs = OptionRules.inRange("reclaimDeadlineMs", reclaimDeadlineMs, 1, 3_600_000);
        return this;
    }

    /** The pool's memory limit per rank in bytes, or {@code null} for none. */
    public Long getMemoryLimitBytes() {
        return memoryLimitBytes;
    }

    /** The pool's memory limit per rank in bytes at start, or {@code null} for none. */
    public KvCacheOptions setMemoryLimitBytes(Long memoryLimitBytes) {
        this.memoryLimitBytes = memoryLimitBytes == null ? null : OptionRules.atLeast("memoryLimitBytes", memoryLimitBytes, 0L);
        return this;
    }

    public boolean isLazyStart() {
        return lazyStart;
    }

    /**
     * When true, {@code deploy} completes as soon as the coordinator listens, and the ranks'
     * tensors are created in the background: the first {@code alloc} waits for them, and fails
     * with the start's cause if they could not be created.
     */
    public KvCacheOptions setLazyStart(boolean lazyStart) {
        this.lazyStart = lazyStart;
        return this;
    }

    public boolean isLocalWorkers() {
        return localWorkers;
    }

    /** Whether {@code deploy} also deploys one rank worker per (stage, tp rank) in this Vert.x. */
    public KvCacheOptions setLocalWorkers(boolean localWorkers) {
        this.localWorkers = localWorkers;
        return this;
    }

    public String getDevice() {
        return device;
    }

    /** The device kind of local workers: {@code sim} or {@code cuda}. */
    public KvCacheOptions setDevice(String device) {
        this.device = OptionRules.deviceKind("device", device);
        return this;
    }

    /** The explicit GPU of local workers by rank name ({@code {"pp0/tp1": 3}}). */
    public Map<String, Integer> getGpus() {
        return gpus;
    }

    /** GPUs of local workers by rank name, e.g. {@code {"pp0/tp1": 3}}; ranks not named use {@link #gpuOf}'s default. */
    public KvCacheOptions setGpus(Map<String, Integer> gpus) {
        if (gpus == null) {
            throw new IllegalArgumentException("gpus must be a JSON object of rank name to GPU index, got null");
        }
        for (Map.Entry<String, Integer> entry : gpus.entrySet()) {
            if (entry.getKey() == null || !RANK_NAME.matcher(entry.getKey()).matches()) {
                throw new IllegalArgumentException("gpus: '" + entry.getKey() + "' is not a rank name such as pp0/tp1");
            }
            if (entry.getValue() == null || entry.getValue() < 0) {
                throw new IllegalArgumentException("gpus: the GPU of " + entry.getKey() + " must be an index >= 0, got " + entry.getValue());
            }
        }
        this.gpus = Collections.unmodifiableMap(new LinkedHashMap<>(gpus));
        return this;
    }

    /** Sim device options for local workers (capacity, latency model, faults, GPU namespace). */
    public SimOptions getSim() {
        return sim;
    }

    /**
     * Sim device options for local workers: in JSON {@code {"capacityBytes": n, "granularity": n,
     * "latency": bool, "faults": [...], "gpuKey": "..."}}, each key optional ({@link SimOptions}).
     */
    public KvCacheOptions setSim(SimOptions sim) {
        if (sim == null) {
            throw new IllegalArgumentException("sim must be the sim device's options, got null");
        }
        this.sim = sim;
        return this;
    }

    /** How ranks keep unmapped handles for reuse, or {@code null} for the workers' defaults. */
    public HandlePoolOptions getHandlePool() {
        return handlePool;
    }

    /**
     * How many page ids' worth of unmapped handles each rank keeps idle for this pool
     * ({@code boundPages}) and creates idle with the tensors ({@code prefillPages}, at most the
     * bound); in JSON {@code {"prefillPages": 0, "boundPages": 4}}. {@code null} for the workers'
     * defaults (4 page ids for {@code PER_LAYER}, none for {@code PAGE_MAJOR}). Idle handles hold GPU
     * memory and count as used.
     */
    public KvCacheOptions setHandlePool(HandlePoolOptions handlePool) {
        this.handlePool = handlePool;
        return this;
    }

    /** The {@code handlePool} object read strictly: only its two keys, integers >= 0, a prefill within the bound; {@code {}} is the defaults. */
    private static HandlePoolOptions handlePoolOf(String field, JsonObject json) {
        OptionReader.knownKeys(json, HANDLE_POOL_KEYS, field + " option");
        Integer prefill = null;
        Integer bound = null;
        if (json.containsKey("prefillPages")) {
            prefill = OptionRules.atLeast(field + ".prefillPages", OptionReader.integer(field + ".prefillPages", json.getValue("prefillPages")), 0);
        }
        if (json.containsKey("boundPages")) {
            bound = OptionRules.atLeast(field + ".boundPages", OptionReader.integer(field + ".boundPages", json.getValue("boundPages")), 0);
        }
        if (bound == null) {
            if (prefill != null) {
                throw new IllegalArgumentException(field + ".prefillPages needs " + field + ".boundPages: prefilled handles are idle "
                        + "ones, which the bound must hold");
            }
            return null;
        }
        if (prefill != null && prefill > bound) {
            throw new IllegalArgumentException(field + ".prefillPages (" + prefill + ") must not exceed " + field + ".boundPages ("
                    + bound + "): prefilled handles are idle ones");
        }
        return new HandlePoolOptions(prefill == null ? 0 : prefill, bound);
    }

    /** The {@code gpus} object: rank name to GPU index, each an integer (the setter checks names and range). */
    private static Map<String, Integer> gpusOf(String field, JsonObject json) {
        Map<String, Integer> gpus = new LinkedHashMap<>();
        for (String rank : json.fieldNames()) {
            Object gpu = json.getValue(rank);
            if (!(gpu instanceof Integer || gpu instanceof Long) || ((Number) gpu).longValue() > Integer.MAX_VALUE
                    || ((Number) gpu).longValue() < Integer.MIN_VALUE) {
                throw new IllegalArgumentException(field + ": the GPU of " + rank + " must be an index >= 0, got " + gpu);
            }
            gpus.put(rank, ((Number) gpu).intValue());
        }
        return gpus;
    }

    @Override
    public String toString() {
        return "KvCacheOptions" + toJson().encode();
    }

    private static Layout layoutOf(String name) {
        try {
            return Layout.valueOf(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("layout must be PAGE_MAJOR or PER_LAYER, got '" + name + "'");
        }
    }
}

package io.kvpager.harness.fuzz;

import io.kvpager.Layout;
import io.kvpager.protocol.CoordinatorAction;
import io.kvpager.protocol.CoordinatorRequest;
import io.kvpager.protocol.WorkerAction;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;

/**
 * A seeded stream of malformed and hostile messages for a pool's rank workers (four in five) and
 * its coordinator: bodies of the wrong type or none, missing and unknown actions, fields missing,
 * mistyped and out of range, page ids negative, too large, repeated and by the hundred thousand,
 * unknown groups, other ranks' requests, owners missing, malformed and foreign, tensors that
 * contradict the group's, maps of mapped pages
 * and unmaps of unmapped ones, frees of blocks never allocated, retirements of fences never opened,
 * negative limits, reused and oversized request ids.
 *
 * <p>Each message carries at least one defect the receiver must refuse before it changes anything,
 * and the code it must refuse it with: workers check the action, the body's type, the rank, the
 * request id, the group, the owner's form, whether the group exists (404), the page ids, then
 * whether the owner is the group's (409) and conflicts with what is mapped (409), in that order;
 * a {@code create-tensors} always names the group's own owner, since another owner's would
 * reclaim the group; the coordinator answers every refusal with 400. Never a valid
 * request: that would change the pool, which the fuzz checks does not happen.
 */
public final class HostileMessages {

    static final List<String> WORKER_ACTIONS = WorkerAction.wireNames();
    static final List<String> COORDINATOR_ACTIONS = CoordinatorAction.wireNames();
    /** Actions a worker refuses for lack of a required field when the body has none of its fields: all but stats. */
    private static final List<String> WORKER_ACTIONS_WITH_FIELDS = Arrays.stream(WorkerAction.values())
            .filter(action -> action != WorkerAction.STATS).map(WorkerAction::wireName).toList();
    /** Actions the coordinator refuses for lack of a required field, as its request records read an empty body. */
    private static final List<String> COORDINATOR_ACTIONS_WITH_FIELDS = Arrays.stream(CoordinatorAction.values())
            .filter(HostileMessages::needsFields).map(CoordinatorAction::wireName).toList();
    private static final String MAP = WorkerAction.MAP.wireName();
    private static final String ALLOC = CoordinatorAction.ALLOC.wireName();
    private static final String FREE = CoordinatorAction.FREE.wireName();
    private static final String RETIRED = CoordinatorAction.RETIRED.wireName();
    private static final String LIMIT = CoordinatorAction.LIMIT.wireName();
    private static final String UNMAP = WorkerAction.UNMAP.wireName();
    /** Names a worker does not answer: near misses of its own, and the coordinator's (but stats, which both answer). */
    private static final List<String> STRANGE_ACTIONS = Stream.concat(Stream.of("", " ", "MAP", "Map", " map", "map ", "unmap\n",
                    "create_tensors", "createTensors", "destroy", "kill", "shutdown", "__vertx.reply", "null", "\u0000", "map;unmap",
                    "stats?", "%s%s%s", "../map"), COORDINATOR_ACTIONS.stream())
            .filter(name -> !WORKER_ACTIONS.contains(name)).toList();
    /** Names the coordinator does not answer: near misses of its own, and the workers' (but stats). */
    private static final List<String> STRANGE_COORDINATOR_ACTIONS = Stream.concat(Stream.of("", " ", "ALLOC", "Alloc", " alloc",
                    "free ", "allocate", "release", "shutdown", "\u0000", "stats\n", "fence?", "limit;trim"), WORKER_ACTIONS.stream())
            .filter(name -> !COORDINATOR_ACTIONS.contains(name)).toList();
    /** Share of page-id and block-id arrays made huge: tens of thousands of elements. */
    private static final int HUGE_ONE_IN = 400;

    private final PoolFacts facts;
    private final SplittableRandom random;
    private final BitSet mapped;
    private final BitSet allocated;
    private final int pages;
    private final int totalBlocks;
    private final List<String> usedIds = new ArrayList<>();
    private long ids;

    private static boolean needsFields(CoordinatorAction action) {
        try {
            CoordinatorRequest.fromJson(action, new JsonObject());
            return false;
        } catch (IllegalArgumentException e) {
            return true;
        }
    }

    public HostileMessages(PoolFacts facts, long seed) {
        this.facts = facts;
        this.random = new SplittableRandom(seed);
        this.mapped = facts.mappedSet();
        this.allocated = facts.allocatedSet();
        this.pages = facts.geometry().pages();
        this.totalBlocks = facts.geometry().totalBlocks();
    }

    /** The next message. */
    public HostileMessage next() {
        return random.nextInt(5) == 0 ? toCoordinator() : toWorker(random.nextInt(facts.tp()));
    }

    // ---- workers ----

    private HostileMessage toWorker(int rank) {
        String target = "pp0/tp" + rank;
        String address = facts.workerAddress(rank);
        int roll = random.nextInt(100);
        if (roll < 8) {
            return new HostileMessage(target, address, pick(WORKER_ACTIONS), notAnObject(), 400, "a body that is no JSON object");
        }
        if (roll < 11) {
            return new HostileMessage(target, address, pick(WORKER_ACTIONS), null, 400, "no body");
        }
        if (roll < 15) {
            return new HostileMessage(target, address, null, conflictingBatch(rank, random.nextBoolean()), 400, "no action header");
        }
        if (roll < 21) {
            return new HostileMessage(target, address, pick(STRANGE_ACTIONS), conflictingBatch(rank, random.nextBoolean()), 400,
                    "an action workers do not have");
        }
        if (roll < 27) {
            return otherRank(target, address, rank);
        }
        if (roll < 31) {
            return new HostileMessage(target, address, pick(WORKER_ACTIONS_WITH_FIELDS), junk(), 400,
                    "none of the action's fields, others instead");
        }
        if (roll < 77) {
            return random.nextInt(3) == 0 ? tensors(target, address) : batch(target, address, rank);
        }
        if (roll < 85) {
            return groupQuery(target, address);
        }
        if (roll < 90 && !usedIds.isEmpty()) {
            boolean map = random.nextBoolean();
            return new HostileMessage(target, address, map ? MAP : UNMAP,
                    conflictingBatch(rank, map).put("requestId", pick(usedIds)), HostileMessage.ANY_REFUSAL,
                    "a request id used before, for another batch or rank");
        }
        return batch(target, address, rank);
    }

    /** A map of pages of which some are mapped, or an unmap of pages of which some are not: a 409 as it stands. */
    private JsonObject conflictingBatch(int rank, boolean map) {
        int n = 1 + random.nextInt(Math.min(4, pages));
        List<Integer> chosen = new ArrayList<>();
        // the page that makes it conflict: mapped for a map, not mapped for an unmap
        chosen.add(map ? facts.mapped()[random.nextInt(facts.mapped().length)] : unmappedPage());
        while (chosen.size() < n) {
            int p = random.nextInt(pages);
            if (!chosen.contains(p)) {
                chosen.add(random.nextInt(chosen.size() + 1), p);
            }
        }
        JsonObject body = new JsonObject().put("group", facts.group()).put("pages", new JsonArray(new ArrayList<>(chosen)))
                .put("requestId", freshId()).put("owner", facts.owner());
        if (random.nextBoolean()) {
            body.put("pp", 0).put("tp", rank);
        }
        return body;
    }

    private int unmappedPage() {
        int p;
        do {
            p = random.nextInt(pages);
        } while (mapped.get(p));
        return p;
    }

    /** A map or unmap with exactly one defect, or none but its conflict (409). */
    private HostileMessage batch(String target, String address, int rank) {
        boolean map = random.nextBoolean();
        String action = map ? MAP : UNMAP;
        JsonObject body = conflictingBatch(rank, map);
        String id = body.getString("requestId");
        int defect = random.nextInt(20);
        HostileMessage message = switch (defect) {
            case 0 -> refuse(target, address, action, without(body, "requestId"), "no requestId");
            case 1 -> refuse(target, address, action, body.put("requestId", notAString()), "a requestId that is no string");
            case 2 -> refuse(target, address, action, body.put("requestId", ""), "an empty requestId");
            case 3 -> refuse(target, address, action, without(body, "group"), "no group");
            case 4 -> refuse(target, address, action, body.put("group", notAnInteger()), "a group that is no integer");
            case 5 -> refuse(target, address, action, body.put("group", outOfIntRange()), "a group out of range");
            case 6 -> new HostileMessage(target, address, action, body.put("group", otherGroup()), 404, "a group without tensors");
            case 7 -> refuse(target, address, action, without(body, "pages"), "no pages");
            case 8 -> refuse(target, address, action, body.put("pages", notAnArray()), "pages that are no array");
            case 9 -> refuse(target, address, action, body.put("pages", withElement(body.getJsonArray("pages"), notAnInteger())),
                    "a page id that is no integer");
            case 10 -> refuse(target, address, action, body.put("pages", withElement(body.getJsonArray("pages"),
                    -1 - random.nextInt(1_000_000))), "a negative page id");
            case 11 -> refuse(target, address, action, body.put("pages", withElement(body.getJsonArray("pages"), beyond(pages))),
                    "a page id past the group's pages");
            case 12 -> refuse(target, address, action, body.put("pages", withElement(body.getJsonArray("pages"),
                    body.getJsonArray("pages").getValue(0))), "a page id twice");
            case 13 -> refuse(target, address, action, body.put("pages", ints(pages + 1 + random.nextInt(64), pages)),
                    "more page ids than the group has");
            case 14 -> random.nextInt(HUGE_ONE_IN / 20) == 0
                    ? refuse(target, address, action, body.put("pages", ints(20_000 + random.nextInt(180_000), Integer.MAX_VALUE)),
                            "a huge array of page ids")
                    : refuse(target, address, action, body.put("pages", withElement(body.getJsonArray("pages"), beyond(pages))),
                            "a page id past the group's pages");
            case 15 -> random.nextInt(40) == 0
                    ? new HostileMessage(target, address, action, body.put("requestId", "r".repeat(4_000 + random.nextInt(60_000))),
                            HostileMessage.ANY_REFUSAL, "an oversized requestId")
                    : new HostileMessage(target, address, action, body, 409,
                            map ? "a page already mapped" : "a page not mapped");
            case 16 -> refuse(target, address, action, without(body, "owner"), "no owner");
            case 17 -> refuse(target, address, action, body.put("owner", malformedOwner()), "a malformed owner");
            case 18 -> new HostileMessage(target, address, action, body.put("owner", foreignOwner()), 409, "another owner's request");
            default -> new HostileMessage(target, address, action, body, 409, map ? "a page already mapped" : "a page not mapped");
        };
        if (message.body() instanceof JsonObject sent && sent.getValue("requestId") instanceof String used && used.equals(id)) {
            remember(id);
        }
        return message;
    }

    /** {@code create-tensors} that contradicts the group's tensors (409), or has a broken field (400). */
    private HostileMessage tensors(String target, String address) {
        JsonObject body = new JsonObject().put("group", facts.group()).put("layers", facts.geometry().layers())
                .put("kvBuffers", facts.geometry().kvBuffers()).put("blockBytes", facts.geometry().blockBytes())
                .put("pageBytes", facts.geometry().pageBytes()).put("pages", pages)
                .put("layout", facts.geometry().layout().name()).put("zeroPage", false).put("owner", facts.owner());
        String action = WorkerAction.CREATE_TENSORS.wireName();
        if (random.nextInt(3) == 0) {
            // the group that exists, asked for with other tensors
            return switch (random.nextInt(7)) {
                case 0 -> new HostileMessage(target, address, action, body.put("pages", pages + 1 + random.nextInt(100)), 409,
                        "another page count for the group");
                case 1 -> new HostileMessage(target, address, action, body.put("layers", facts.geometry().layers() + 1), 409,
                        "another layer count for the group");
                case 2 -> new HostileMessage(target, address, action, body.put("layout", otherLayout()), 409,
                        "another layout for the group");
                case 3 -> new HostileMessage(target, address, action, body.put("zeroPage", true), 409,
                        "a zero page for the group");
                case 4 -> new HostileMessage(target, address, action, body.put("blockBytes", facts.geometry().blockBytes() / 2), 409,
                        "another block size for the group");
                case 5 -> new HostileMessage(target, address, action, body.put("pageBytes", 3L << 20), 409,
                        "pages that are no multiple of the granularity, for the group");
                // a prefill differs from the default pool of either layout, which prefills nothing
                default -> new HostileMessage(target, address, action, body.put("handlePool",
                        new JsonObject().put("prefillPages", 1).put("boundPages", 1 + random.nextInt(pages))), 409,
                        "another handle pool for the group");
            };
        }
        // a group with or without tensors: a broken field is refused before either matters
        if (random.nextBoolean()) {
            body.put("group", otherGroup());
        }
        String field = pick(List.of("layers", "kvBuffers", "blockBytes", "pageBytes", "pages"));
        return switch (random.nextInt(13)) {
            case 10 -> refuse(target, address, action, without(body, "owner"), "no owner");
            case 11 -> refuse(target, address, action, body.put("owner", malformedOwner()), "a malformed owner");
            case 0 -> refuse(target, address, action, without(body, "group"), "no group");
            case 1 -> refuse(target, address, action, body.put("group", notAnInteger()), "a group that is no integer");
            case 2 -> refuse(target, address, action, without(body, field), "no " + field);
            case 3 -> refuse(target, address, action, body.put(field, notAnInteger()), field + " that is no integer");
            case 4 -> refuse(target, address, action, body.put(field, -random.nextInt(3)), field + " below 1");
            case 5 -> refuse(target, address, action, body.put("layout", pick(List.of("ROW_MAJOR", "page_major", "", "PER LAYER"))),
                    "an unknown layout");
            case 6 -> refuse(target, address, action, without(body, "layout"), "no layout");
            case 7 -> refuse(target, address, action, body.put("blockBytes", facts.geometry().pageBytes() * 2), "a block larger than a page");
            case 8 -> refuse(target, address, action, body.put("zeroPage", pick(List.of("yes", 1, "true"))), "a zeroPage that is no boolean");
            case 9 -> refuse(target, address, action, body.put("handlePool", pick(List.of(
                    new JsonObject().put("bound", 2), new JsonObject().put("boundPages", -1),
                    new JsonObject().put("boundPages", pages + 1), new JsonObject().put("prefillPages", 2).put("boundPages", 1),
                    new JsonObject().put("boundPages", "4")))), "a broken handlePool");
            default -> refuse(target, address, action, body.put("handlePool", notAnObjectValue()), "a handlePool that is no object");
        };
    }

    /** {@code views}, {@code tensors-created} or {@code destroy-tensors} with a broken or unknown group. */
    private HostileMessage groupQuery(String target, String address) {
        String action = pick(List.of(WorkerAction.VIEWS.wireName(), WorkerAction.TENSORS_CREATED.wireName(),
                WorkerAction.DESTROY_TENSORS.wireName()));
        JsonObject body = new JsonObject();
        return switch (random.nextInt(4)) {
            case 0 -> refuse(target, address, action, body, "no group");
            case 1 -> refuse(target, address, action, body.put("group", notAnInteger()), "a group that is no integer");
            case 2 -> refuse(target, address, action, body.put("group", outOfIntRange()), "a group out of range");
            default -> WorkerAction.VIEWS.wireName().equals(action)
                    ? new HostileMessage(target, address, action, body.put("group", otherGroup()), 404, "a group without tensors")
                    : refuse(target, address, action, body.put("group", notAnInteger()), "a group that is no integer");
        };
    }

    /** Any action, for another stage or another rank. */
    private HostileMessage otherRank(String target, String address, int rank) {
        String action = pick(WORKER_ACTIONS);
        JsonObject body = MAP.equals(action) || UNMAP.equals(action) ? conflictingBatch(rank, MAP.equals(action))
                : new JsonObject().put("group", facts.group());
        return switch (random.nextInt(4)) {
            case 0 -> refuse(target, address, action, body.put("pp", 1 + random.nextInt(7)).put("tp", rank), "another stage's request");
            // ranks past the last one included: a request for any rank but this one
            case 1 -> refuse(target, address, action, body.put("pp", 0).put("tp", rank + 1 + random.nextInt(2 * facts.tp())),
                    "another rank's request");
            case 2 -> refuse(target, address, action, body.put("pp", notAnInteger()), "a pp that is no integer");
            default -> refuse(target, address, action, body.put("tp", notAnInteger()), "a tp that is no integer");
        };
    }

    // ---- the coordinator ----

    private HostileMessage toCoordinator() {
        String target = "coordinator";
        String address = facts.coordinatorAddress();
        int roll = random.nextInt(100);
        if (roll < 15) {
            return new HostileMessage(target, address, pick(COORDINATOR_ACTIONS), notAnObject(), 400, "a body that is no JSON object");
        }
        if (roll < 21) {
            return new HostileMessage(target, address, pick(COORDINATOR_ACTIONS_WITH_FIELDS), null, 400, "no body");
        }
        if (roll < 26) {
            return new HostileMessage(target, address, null, random.nextBoolean() ? new JsonObject() : junk(), 400, "no action header");
        }
        if (roll < 34) {
            return new HostileMessage(target, address, pick(STRANGE_COORDINATOR_ACTIONS), new JsonObject().put("blocks", 1), 400,
                    "an action the coordinator does not have");
        }
        if (roll < 38) {
            return new HostileMessage(target, address, pick(COORDINATOR_ACTIONS_WITH_FIELDS), junk(), 400,
                    "none of the action's fields, others instead");
        }
        if (roll < 50) {
            JsonObject body = new JsonObject();
            return switch (random.nextInt(5)) {
                case 0 -> refuse(target, address, ALLOC, body, "no block count");
                case 1 -> refuse(target, address, ALLOC, body.put("blocks", notAnInteger()), "a block count that is no integer");
                case 2 -> refuse(target, address, ALLOC, body.put("blocks", -random.nextInt(1_000)), "no blocks or fewer");
                case 3 -> refuse(target, address, ALLOC, body.put("blocks", totalBlocks + 1 + random.nextInt(1_000_000)),
                        "more blocks than the pool has");
                default -> refuse(target, address, ALLOC, body.put("blocks", outOfIntRange()), "a block count out of range");
            };
        }
        if (roll < 75) {
            return free(target, address);
        }
        if (roll < 87) {
            JsonObject body = new JsonObject();
            return switch (random.nextInt(3)) {
                case 0 -> refuse(target, address, RETIRED, body, "no fence");
                case 1 -> refuse(target, address, RETIRED, body.put("fence", notAnInteger()), "a fence that is no integer");
                default -> refuse(target, address, RETIRED, body.put("fence", pick(List.of(0L, -1L, 1L, 7L, Long.MAX_VALUE,
                        Long.MIN_VALUE, (long) random.nextInt()))), "a fence that is not open");
            };
        }
        JsonObject body = new JsonObject().put("bytes", random.nextLong(1L << 40)).put("revision", random.nextLong(1_000));
        return switch (random.nextInt(5)) {
            case 0 -> refuse(target, address, LIMIT, body.put("bytes", -1 - random.nextLong(1L << 40)), "a negative limit");
            case 1 -> refuse(target, address, LIMIT, body.put("revision", -1 - random.nextLong(1L << 40)), "a negative revision");
            case 2 -> refuse(target, address, LIMIT, body.put("bytes", notAnInteger()), "a limit that is no integer");
            // without a revision a limit is the next change, which applies: past 2^62 is what may not
            case 3 -> refuse(target, address, LIMIT, body.put("revision", pick(List.of(Long.MAX_VALUE, (1L << 62) + 1,
                    (1L << 62) + 1 + random.nextLong(Long.MAX_VALUE - (1L << 62))))), "a revision past 2^62");
            default -> refuse(target, address, LIMIT, without(body, "bytes"), "no limit");
        };
    }

    /** A free that names at least one block it may not: never allocated, out of range, twice, or no block id at all. */
    private HostileMessage free(String target, String address) {
        JsonObject body = new JsonObject();
        List<Object> blocks = new ArrayList<>();
        int mine = random.nextInt(4);
        for (int i = 0; i < mine; i++) {
            blocks.add(facts.allocated()[random.nextInt(facts.allocated().length)]);
        }
        String defect;
        switch (random.nextInt(7)) {
            case 0 -> {
                int b;
                do {
                    b = random.nextInt(totalBlocks);
                } while (allocated.get(b));
                blocks.add(random.nextInt(blocks.size() + 1), b);
                defect = "a block never allocated";
            }
            case 1 -> {
                blocks.add(random.nextInt(blocks.size() + 1), beyond(totalBlocks));
                defect = "a block past the pool";
            }
            case 2 -> {
                blocks.add(random.nextInt(blocks.size() + 1), -1 - random.nextInt(1_000_000));
                defect = "a negative block";
            }
            case 3 -> {
                int b = facts.allocated()[random.nextInt(facts.allocated().length)];
                blocks.add(b);
                blocks.add(random.nextInt(blocks.size() + 1), b);
                defect = "a block twice";
            }
            case 4 -> {
                blocks.add(random.nextInt(blocks.size() + 1), notAnInteger());
                defect = "a block id that is no integer";
            }
            case 5 -> {
                if (random.nextInt(HUGE_ONE_IN / 20) == 0) {
                    return refuse(target, address, FREE, body.put("blocks", ints(20_000 + random.nextInt(280_000), Integer.MAX_VALUE)),
                            "a huge array of block ids");
                }
                return refuse(target, address, FREE, body.put("blocks", notAnArray()), "blocks that are no array");
            }
            default -> {
                return refuse(target, address, FREE, body, "no blocks");
            }
        }
        return refuse(target, address, FREE, body.put("blocks", new JsonArray(blocks)), defect);
    }

    // ---- values ----

    private static HostileMessage refuse(String target, String address, String action, Object body, String defect) {
        return new HostileMessage(target, address, action, body, 400, defect);
    }

    private static JsonObject without(JsonObject body, String field) {
        body.remove(field);
        return body;
    }

    private String freshId() {
        return "fuzz-" + Long.toHexString(random.nextLong()) + "-" + (++ids);
    }

    private void remember(String id) {
        if (usedIds.size() < 256) {
            usedIds.add(id);
        } else {
            usedIds.set(random.nextInt(usedIds.size()), id);
        }
    }

    /** An owner no worker takes: no string, no {@code #}, a node id of the wrong characters or length, an epoch written otherwise. */
    private Object malformedOwner() {
        String node = facts.owner().substring(0, facts.owner().lastIndexOf('#'));
        return pick(List.of("", "#", "#1", node, node + "#", node + "#-1", node + "#+1", node + "#01", node + "# 1", node + "#1.5",
                node + "#99999999999999999999", "no de#1", "x".repeat(129) + "#1", "x".repeat(4_000) + "#1", 7, 1.5, true,
                new JsonObject().put("nodeId", node), new JsonArray().add(facts.owner())));
    }

    /** A well-formed owner that is not the group's. */
    private String foreignOwner() {
        return pick(List.of("fuzz-node#" + random.nextInt(1_000), facts.owner() + "1",
                facts.owner().substring(0, facts.owner().lastIndexOf('#')) + "#" + random.nextLong(Long.MAX_VALUE)));
    }

    private int otherGroup() {
        int g;
        do {
            g = random.nextInt(4) == 0 ? random.nextInt(Integer.MAX_VALUE) : random.nextInt(1_000);
        } while (g == facts.group());
        return g;
    }

    private String otherLayout() {
        return facts.geometry().layout() == Layout.PAGE_MAJOR ? Layout.PER_LAYER.name() : Layout.PAGE_MAJOR.name();
    }

    /** An id at or past {@code limit}: just past it, far past it, or past the int range. */
    private Object beyond(int limit) {
        return switch (random.nextInt(4)) {
            case 0 -> limit;
            case 1 -> limit + random.nextInt(1_000);
            case 2 -> Integer.MAX_VALUE;
            default -> (long) Integer.MAX_VALUE + 1 + random.nextInt(1_000_000);
        };
    }

    private Object outOfIntRange() {
        return pick(List.of(-1, Integer.MIN_VALUE, (long) Integer.MAX_VALUE + 1, Long.MAX_VALUE, Long.MIN_VALUE,
                -1 - random.nextInt(1_000_000)));
    }

    private Object notAnInteger() {
        return switch (random.nextInt(7)) {
            case 0 -> String.valueOf(random.nextInt(10));
            case 1 -> random.nextInt(10) + 0.5;
            case 2 -> 1.0;
            case 3 -> random.nextBoolean();
            case 4 -> new JsonArray().add(random.nextInt(10));
            case 5 -> new JsonObject().put("value", 1);
            default -> "";
        };
    }

    private Object notAString() {
        return switch (random.nextInt(4)) {
            case 0 -> random.nextInt();
            case 1 -> random.nextBoolean();
            case 2 -> new JsonArray().add("id");
            default -> new JsonObject().put("id", "x");
        };
    }

    private Object notAnArray() {
        return switch (random.nextInt(4)) {
            case 0 -> random.nextInt(pages);
            case 1 -> "[1, 2]";
            case 2 -> new JsonObject().put("0", 1);
            default -> true;
        };
    }

    private Object notAnObjectValue() {
        return switch (random.nextInt(3)) {
            case 0 -> 4;
            case 1 -> "{\"boundPages\": 1}";
            default -> new JsonArray().add(1);
        };
    }

    /** A body of a type the bus carries that is not a JSON object. */
    private Object notAnObject() {
        return switch (random.nextInt(9)) {
            case 0 -> pick(List.of("", "{}", "{\"group\":0,\"pages\":[1],\"requestId\":\"x\"}", "map", "\u0000\u0001", "null"));
            case 1 -> Buffer.buffer(randomBytes(random.nextInt(64)));
            case 2 -> Buffer.buffer("{\"group\":0,\"pages\":[0]}".getBytes(StandardCharsets.UTF_8));
            case 3 -> new JsonArray().add(new JsonObject().put("group", facts.group()).put("pages", new JsonArray().add(0)));
            case 4 -> new JsonArray();
            case 5 -> random.nextInt();
            case 6 -> random.nextLong();
            case 7 -> random.nextBoolean() ? random.nextDouble() : (Object) Boolean.TRUE;
            default -> randomBytes(random.nextInt(128));
        };
    }

    private JsonObject junk() {
        JsonObject junk = new JsonObject();
        int fields = random.nextInt(5);
        for (int i = 0; i < fields; i++) {
            junk.put("f" + random.nextInt(1_000), pick(List.of(1, "x", true, new JsonArray().add(1), new JsonObject())));
        }
        return junk;
    }

    private JsonArray withElement(JsonArray array, Object element) {
        List<Object> list = new ArrayList<>(array.size() + 1);
        array.forEach(list::add);
        list.add(random.nextInt(list.size() + 1), element);
        return new JsonArray(list);
    }

    /** {@code n} random ints below {@code bound}. */
    private JsonArray ints(int n, int bound) {
        List<Object> list = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            list.add(random.nextInt(bound));
        }
        return new JsonArray(list);
    }

    private byte[] randomBytes(int n) {
        byte[] bytes = new byte[n];
        for (int i = 0; i < n; i++) {
            bytes[i] = (byte) random.nextInt(256);
        }
        return bytes;
    }

    private <T> T pick(List<T> list) {
        return list.get(random.nextInt(list.size()));
    }
}

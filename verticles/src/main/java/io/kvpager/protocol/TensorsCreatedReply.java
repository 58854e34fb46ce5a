package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * The answer to {@code tensors-created}: {@code {"created": true}} or {@code false}, with the lease
 * the worker states for the request's owner ({@link WorkerProtocol#LEASE_MS}) where it follows a cluster.
 *
 * <p>A worker that follows a cluster also says who holds the group there now and how it sees the
 * cluster: {@code owner}, the group's owner on the rank ({@code <nodeId>#<epoch>}, absent when none),
 * {@code ownerMember}, whether that owner's node is a member of the cluster as the worker sees it,
 * and {@code askerMember}, whether the request's owner's node is (absent when the request names no
 * owner). A displaced coordinator reads them before it comes back as a new owner: it must not claim
 * a group that another live coordinator holds, nor claim one while its own node is still split off
 * from the ranks' cluster.
 *
 * @param owner the group's owner on the rank, or {@code null} when none (or the worker does not say)
 * @param ownerMember whether the owner's node is a member as the worker sees it; {@code null} when not said
 * @param askerMember whether the request's owner's node is a member as the worker sees it; {@code null} when not said
 */
public record TensorsCreatedReply(boolean created, Owner owner, Boolean ownerMember, Boolean askerMember) {

    public static final String CREATED = "created";
    public static final String OWNER = "owner";
    public static final String OWNER_MEMBER = "ownerMember";
    public static final String ASKER_MEMBER = "askerMember";

    /** An answer that says only whether the group is there (for its owner). */
    public TensorsCreatedReply(boolean created) {
        this(created, null, null, null);
    }

    public JsonObject toJson() {
        JsonObject json = new JsonObject().put(CREATED, created);
        if (owner != null) {
            json.put(OWNER, owner.toString());
        }
        if (ownerMember != null) {
            json.put(OWNER_MEMBER, ownerMember);
        }
        if (askerMember != null) {
            json.put(ASKER_MEMBER, askerMember);
        }
        return json;
    }

    public static TensorsCreatedReply fromJson(JsonObject json) {
        RequestBody body = new RequestBody(json);
        body.requireOnly(CREATED, WorkerProtocol.LEASE_MS, OWNER, OWNER_MEMBER, ASKER_MEMBER);
        return new TensorsCreatedReply(body.requireBoolean(CREATED), body.optionalOwner(OWNER), optional(body, json, OWNER_MEMBER),
                optional(body, json, ASKER_MEMBER));
    }

    private static Boolean optional(RequestBody body, JsonObject json, String name) {
        return json.getValue(name) == null ? null : body.optionalBoolean(name, false);
    }
}

package io.kvpager.protocol;

import io.vertx.core.json.JsonObject;

/**
 * A request to a rank worker, one record per {@link WorkerAction}: what a coordinator writes with
 * {@link #toJson()} and the worker reads back with the record's strict {@code fromJson}. A
 * fan-out to several ranks adds only the routing envelope to each copy, the target's {@code pp}
 * and {@code tp} ({@link RequestFields#PP}, {@link RequestFields#TP}).
 */
public sealed interface WorkerRequest permits CreateTensorsRequest, TensorsCreatedRequest, PagesRequest, KeepHandlesRequest,
        DestroyTensorsRequest, StatsRequest, ViewsRequest {

    /** The action this request is sent with. */
    WorkerAction action();

    /** The group the request is for; -1 for a request about the whole rank ({@code stats}). */
    int group();

    /** The owner the request is sent as; null when it names none. */
    Owner owner();

    /** The body, without the routing envelope. */
    JsonObject toJson();
}

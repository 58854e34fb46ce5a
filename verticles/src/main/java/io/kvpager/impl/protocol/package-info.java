/**
 * What travels between a coordinator and its rank workers on the event bus: the worker actions
 * ({@link io.kvpager.impl.protocol.WorkerAction}), a coordinator incarnation's name
 * ({@link io.kvpager.impl.protocol.Owner}) and the strict reader of a request body
 * ({@link io.kvpager.impl.protocol.RequestBody}). Values only, with no thread of their own: each
 * side uses them on its own thread (the coordinator's event loop, the rank's worker thread).
 */
package io.kvpager.impl.protocol;

/**
 * What travels between a coordinator and its rank workers on the event bus: the worker actions
 * ({@link io.kvpager.impl.protocol.WorkerAction}), a coordinator incarnation's name
 * ({@link io.kvpager.impl.protocol.Owner}) and the strict reader of a request body
 * ({@link io.kvpager.impl.protocol.RequestBody}); one typed record per request and per reply, each
 * with a strict {@code fromJson} that refuses a missing, mistyped or out-of-range field with an
 * {@link java.lang.IllegalArgumentException} naming it (a 400 on the worker); and a rank failure's
 * fields ({@link io.kvpager.impl.protocol.RankFailureJson}) with the codec that carries them
 * ({@link io.kvpager.impl.protocol.RankFailureReply}). Both ends use these records: the rank worker
 * to read requests and write replies, the coordinator to write requests and read replies. The
 * public face for raw bus clients is {@link io.kvpager.protocol.WorkerProtocol}.
 *
 * <p>Values only, with no thread of their own: each side uses them on its own thread (the
 * coordinator's event loop, the rank's worker thread).
 */
package io.kvpager.impl.protocol;

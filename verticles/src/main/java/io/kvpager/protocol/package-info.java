/**
 * kvpager's event-bus protocol, the one home both ends use: the actions a rank worker answers
 * ({@link io.kvpager.protocol.WorkerAction}) and those a coordinator answers
 * ({@link io.kvpager.protocol.CoordinatorAction}); the bus addresses, built and read back in one
 * place ({@link io.kvpager.protocol.BusAddress}); a coordinator incarnation's name
 * ({@link io.kvpager.protocol.Owner}); one typed record per request and per reply, each with a strict
 * {@code fromJson} that refuses a missing, mistyped or out-of-range field with an
 * {@link java.lang.IllegalArgumentException} naming it (a 400 at the receiving end), through the
 * one strict reader ({@link io.kvpager.protocol.RequestBody}); and a rank failure's fields
 * ({@link io.kvpager.protocol.RankFailureJson}) with the codec that carries them
 * ({@link io.kvpager.protocol.RankFailureReply}).
 *
 * <p>The rank worker reads its requests and writes its replies with these records; the coordinator
 * writes its requests to the ranks and reads their replies with the same records, and reads its own
 * requests and writes its replies with the coordinator's; a client of the coordinator (the command
 * line's {@code status}, {@code top} and {@code limit}) writes and reads those same records. A raw
 * bus client starts at {@link io.kvpager.protocol.WorkerProtocol}. Every body, with examples, is in
 * {@code docs/protocol.md}.
 *
 * <p>Values only, with no thread of their own: each side uses them on its own thread (the
 * coordinator's event loop, the rank's worker thread, the caller's).
 */
package io.kvpager.protocol;

/**
 * The wire form of the worker protocol: one typed record per request and per reply, each with a
 * strict {@code fromJson} that refuses a missing, mistyped or out-of-range field with an
 * {@link java.lang.IllegalArgumentException} naming it (a 400 on the worker), and the rank
 * failure's fields ({@link io.kvpager.impl.protocol.RankFailureJson}) with the codec that carries
 * them ({@link io.kvpager.impl.protocol.RankFailureReply}). Both ends use these records: the rank
 * worker to read requests and write replies, the coordinator to write requests and read replies.
 * The public face for raw bus clients is {@link io.kvpager.protocol.WorkerProtocol}.
 *
 * <p>The records are values with no thread of their own: they are built and read on the thread
 * that sends or handles the message (the rank's worker thread, or the coordinator's event loop).
 */
package io.kvpager.impl.protocol;

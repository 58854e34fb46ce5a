/**
 * What a client needs to talk to kvpager's verticles over the event bus without the
 * {@link io.kvpager.KvCache} API: the addresses, the {@code action} header, the action names, and
 * how a rank's failure is read as fields ({@link io.kvpager.protocol.WorkerProtocol}). The bodies
 * of every request, reply and failure are described, with examples, in {@code docs/protocol.md}.
 *
 * <p>Nothing here runs on a thread of its own: the constants are plain values, and the helpers run
 * on the caller's thread.
 */
package io.kvpager.protocol;

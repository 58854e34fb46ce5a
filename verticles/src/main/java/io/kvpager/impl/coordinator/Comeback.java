package io.kvpager.impl.coordinator;

import io.kvpager.protocol.Owner;
import io.kvpager.protocol.TensorsCreatedReply;

import java.util.ArrayList;
import java.util.List;

/**
 * Whether a displaced coordinator may come back as a new owner of its group, judged on what its
 * ranks say of the group now ({@code tensors-created} with the displaced owner,
 * {@link TensorsCreatedReply}). A new incarnation's {@code create-tensors} takes the group from
 * whoever holds it on the ranks, so it must not be sent while another live coordinator holds it,
 * nor while this node is still split off from the ranks' cluster: its claim would then be taken
 * back at the merge, and the claim's GPU share counted on a side of the split whose records the
 * merge does not keep.
 *
 * @param verdict what the coordinator does
 * @param detail the ranks' words, for its log line
 */
record Comeback(Verdict verdict, String detail) {

    enum Verdict {
        /** The ranks hold the group for nobody live but this node's incarnations, and count this node a member: claim it. */
        CLAIM,
        /** A rank holds the group for an owner on another node that it counts a member: that coordinator serves; stay displaced. */
        ANOTHER_OWNER,
        /** A rank does not count this node a member: it is split off from the ranks' cluster; wait for the merge. */
        SPLIT_OFF,
        /** No rank answered: wait until one does (right after a pause the node's side of the split has dropped the ranks). */
        UNANSWERED
    }

    /**
     * Judges the answers of the ranks to {@code displaced}'s {@code tensors-created}: another live
     * owner first, then a rank that does not count this node a member; with neither, a claim as soon
     * as one rank answered (a rank that did not is brought back by the new incarnation, as any lost
     * rank).
     */
    static Comeback judge(Owner displaced, List<RankReply> replies) {
        List<String> splitOff = new ArrayList<>();
        List<String> unanswered = new ArrayList<>();
        boolean answered = false;
        for (RankReply reply : replies) {
            if (!reply.succeeded()) {
                unanswered.add(reply.failure().toString());
                continue;
            }
            TensorsCreatedReply said;
            try {
                said = TensorsCreatedReply.fromJson(reply.body());
            } catch (IllegalArgumentException malformed) {
                unanswered.add(reply.rank().name() + " answered tensors-created with " + reply.body().encode() + ": " + malformed.getMessage());
                continue;
            }
            answered = true;
            Owner holder = said.owner();
            if (holder != null && !holder.isOn(displaced.nodeId()) && Boolean.TRUE.equals(said.ownerMember())) {
                return new Comeback(Verdict.ANOTHER_OWNER, reply.rank().name() + " holds the group for owner " + holder
                        + ", whose node it counts a member");
            }
            if (Boolean.FALSE.equals(said.askerMember())) {
                splitOff.add(reply.rank().name());
            }
        }
        if (!splitOff.isEmpty()) {
            return new Comeback(Verdict.SPLIT_OFF, String.join(", ", splitOff) + " " + (splitOff.size() == 1 ? "does" : "do")
                    + " not count node " + displaced.nodeId() + " a member of the cluster");
        }
        if (!answered) {
            return new Comeback(Verdict.UNANSWERED, String.join("; ", unanswered));
        }
        return new Comeback(Verdict.CLAIM, unanswered.isEmpty() ? "every rank answered" : "some ranks did not answer: "
                + String.join("; ", unanswered));
    }
}

package io.kvpager.impl.coordinator;

import io.kvpager.FailureCode;
import io.kvpager.protocol.Owner;
import io.kvpager.protocol.RankTarget;
import io.kvpager.protocol.TensorsCreatedReply;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A displaced coordinator claims its group again only when its ranks hold it for nobody live on
 * another node and count its node a member of their cluster; another live owner keeps it displaced,
 * a rank that does not count its node a member makes it wait for the merge.
 */
class ComebackTest {

    private static final RankTarget TP0 = new RankTarget(0, 0);
    private static final RankTarget TP1 = new RankTarget(0, 1);
    private static final Owner DISPLACED = new Owner("node-a", 1);
    private static final Owner AGAIN_HERE = new Owner("node-a", 2);
    private static final Owner ELSEWHERE = new Owner("node-b", 7);

    @Test
    void ranksThatReleasedTheGroupAndCountTheNodeAMemberLetItClaim() {
        Comeback comeback = Comeback.judge(DISPLACED, List.of(said(TP0, new TensorsCreatedReply(false, null, null, true)),
                said(TP1, new TensorsCreatedReply(false, AGAIN_HERE, true, true))));
        assertThat(comeback.verdict()).as(comeback.detail()).isEqualTo(Comeback.Verdict.CLAIM);
    }

    @Test
    void anotherLiveOwnerOnAnyRankKeepsItDisplacedWhateverTheOthersSay() {
        Comeback comeback = Comeback.judge(DISPLACED, List.of(said(TP0, new TensorsCreatedReply(false, null, null, false)),
                said(TP1, new TensorsCreatedReply(false, ELSEWHERE, true, false))));
        assertThat(comeback.verdict()).isEqualTo(Comeback.Verdict.ANOTHER_OWNER);
        assertThat(comeback.detail()).isEqualTo("pp0/tp1 holds the group for owner node-b#7, whose node it counts a member");
    }

    @Test
    void anOwnerWhoseNodeLeftIsNobodyToYieldTo() {
        Comeback comeback = Comeback.judge(DISPLACED, List.of(said(TP0, new TensorsCreatedReply(true, ELSEWHERE, false, true))));
        assertThat(comeback.verdict()).isEqualTo(Comeback.Verdict.CLAIM);
    }

    @Test
    void aRankThatDoesNotCountTheNodeAMemberMakesItWaitForTheMerge() {
        Comeback comeback = Comeback.judge(DISPLACED, List.of(said(TP0, new TensorsCreatedReply(false, null, null, true)),
                said(TP1, new TensorsCreatedReply(false, null, null, false))));
        assertThat(comeback.verdict()).isEqualTo(Comeback.Verdict.SPLIT_OFF);
        assertThat(comeback.detail()).isEqualTo("pp0/tp1 does not count node node-a a member of the cluster");
    }

    @Test
    void noAnswerIsUnansweredAndAPartialOneIsEnoughToClaim() {
        RankReply down = RankReply.failed(TP0, FailureCode.NO_RANK, "pp0/tp0 has no worker");
        Comeback none = Comeback.judge(DISPLACED, List.of(down, RankReply.ok(TP1, new JsonObject().put("created", "yes"))));
        assertThat(none.verdict()).isEqualTo(Comeback.Verdict.UNANSWERED);
        assertThat(none.detail()).contains("pp0/tp0 has no worker", "pp0/tp1 answered tensors-created with");
        Comeback partial = Comeback.judge(DISPLACED, List.of(down, said(TP1, new TensorsCreatedReply(false, null, null, true))));
        assertThat(partial.verdict()).isEqualTo(Comeback.Verdict.CLAIM);
        assertThat(partial.detail()).contains("pp0/tp0 has no worker");
    }

    @Test
    void aWorkerOutsideAClusterSaysNothingOfMembersAndIsNoObjection() {
        Comeback comeback = Comeback.judge(DISPLACED, List.of(said(TP0, new TensorsCreatedReply(false))));
        assertThat(comeback.verdict()).isEqualTo(Comeback.Verdict.CLAIM);
    }

    private static RankReply said(RankTarget rank, TensorsCreatedReply reply) {
        // as the bus carries it: the text form, read back by the judge
        return RankReply.ok(rank, new JsonObject(reply.toJson().encode()));
    }
}

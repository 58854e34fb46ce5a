package io.kvpager.cli.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class WorstWaitsTest {

    private static ModelReport.Request request(int id, long arrivalMs, long firstTokenMs) {
        return new ModelReport.Request(id, arrivalMs, firstTokenMs, 1000 + id);
    }

    @Test
    void theRequestAtP99IsTheOneWhoseWaitTheComparisonPrintsAsItsP99() {
        Random random = new Random(7);
        for (int trial = 0; trial < 200; trial++) {
            int n = 1 + random.nextInt(300);
            List<ModelReport.Request> requests = new ArrayList<>();
            LatencyRecorder ttft = new LatencyRecorder();
            for (int id = 0; id < n; id++) {
                long arrival = random.nextInt(30_000);
                boolean served = random.nextInt(10) > 0;
                long wait = random.nextInt(6_000);
                requests.add(request(id, arrival, served ? arrival + wait : -1));
                if (served) {
                    ttft.record(wait * 1_000_000);
                }
            }
            ModelReport.Request worst = WorstWaits.atP99(requests);
            if (ttft.count() == 0) {
                assertThat(worst).isNull();
            } else {
                assertThat((double) worst.ttftMs()).as("trial %d", trial).isEqualTo(ttft.percentileMicros(99) / 1000.0);
            }
        }
    }

    @Test
    void ofFiftyFiveRequestsTheP99IsTheLongestWait() {
        List<ModelReport.Request> requests = new ArrayList<>();
        for (int id = 0; id < 55; id++) {
            requests.add(request(id, 100L * id, 100L * id + 10 + id));
        }
        requests.add(request(99, 50, -1));
        assertThat(WorstWaits.atP99(requests).id()).isEqualTo(54);
        assertThat(WorstWaits.atP99(List.of(request(1, 0, -1)))).isNull();
    }

    /**
     * Each policy's p99 request gets a row: its wait under every policy (none without a first
     * token, - when that run never saw it), and each model's requests waiting at its arrival.
     */
    @Test
    void eachPolicysWorstRequestShowsItsWaitUnderEveryPolicyAndWhoWaitedWithIt() {
        // static: the 13b's request 5 waits 4 s; first-come never serves it; arbitrated serves it in 1.5 s
        WorstWaits.Run statik = new WorstWaits.Run("static", List.of(
                List.of(request(1, 900, 1_100), request(2, 2_000, 3_000)),
                List.of(request(4, 1_000, 1_200), request(5, 2_000, 6_000))));
        WorstWaits.Run firstCome = new WorstWaits.Run("first-come", List.of(
                List.of(request(1, 900, 2_000), request(2, 2_000, 2_100)),
                List.of(request(4, 1_000, 3_500), request(5, 2_000, -1))));
        WorstWaits.Run arbitrated = new WorstWaits.Run("arbitrated", List.of(
                List.of(request(1, 900, 950), request(2, 2_000, 2_300)),
                List.of(request(4, 1_000, 1_300))));

        String out = WorstWaits.render(List.of("7b", "13b"), List.of(statik, firstCome, arbitrated));

        assertThat(out).startsWith("worst waits: per model, the request at each policy's TTFT p99, what it waited for its first token under every policy");
        List<String> rows = out.lines().skip(3).map(String::strip).toList();
        assertThat(rows).hasSize(6);
        // under static the 7b's worst is request 2 (1000 ms); at 2.0 s, 7b's 2 and 13b's 5 had arrived without a first token
        assertThat(rows.get(0).split("\\s+")).containsExactly("7b", "static", "#2", "2.0", "1,002", "1000", "100", "300", "1", "1");
        // under first-come it is request 1 (1100 ms); at 0.9 s only it waited
        assertThat(rows.get(1).split("\\s+")).containsExactly("7b", "first-come", "#1", "0.9", "1,001", "200", "1100", "50", "1", "0");
        // under arbitrated the 13b's request 5 never arrived: only the 7b's request 2 waited
        assertThat(rows.get(2).split("\\s+")).containsExactly("7b", "arbitrated", "#2", "2.0", "1,002", "1000", "100", "300", "1", "0");
        // a request that never got a first token is waiting at every later time, and prints none
        assertThat(rows.get(3).split("\\s+")).containsExactly("13b", "static", "#5", "2.0", "1,005", "4000", "none", "-", "1", "1");
        assertThat(rows.get(4).split("\\s+")).containsExactly("13b", "first-come", "#4", "1.0", "1,004", "200", "2500", "300", "1", "1");
        assertThat(rows.get(5).split("\\s+")).containsExactly("13b", "arbitrated", "#4", "1.0", "1,004", "200", "2500", "300", "0", "1");
    }

    @Test
    void aModelWithNoFirstTokenHasNoRowAndRunsMustHaveEveryModel() {
        WorstWaits.Run none = new WorstWaits.Run("static", List.of(List.of(request(1, 0, -1))));
        assertThat(WorstWaits.render(List.of("7b"), List.of(none)).lines().count()).isEqualTo(3);
        WorstWaits.Run short1 = new WorstWaits.Run("static", List.of(List.of(request(1, 0, 10))));
        assertThatThrownBy(() -> WorstWaits.render(List.of("7b", "70b"), List.of(short1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("the run of static has 1 models, not the 2 of [7b, 70b]");
        assertThatThrownBy(() -> WorstWaits.render(List.of("7b"), List.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("nothing to compare");
    }
}

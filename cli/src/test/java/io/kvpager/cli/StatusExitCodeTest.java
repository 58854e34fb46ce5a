package io.kvpager.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvpager.cli.status.InstanceStatus;
import io.kvpager.cli.status.StatusFixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code status} exits with the worst state it found, so that a probe or script can act on it. */
class StatusExitCodeTest {

    @Test
    void theWorstStateWins() {
        InstanceStatus ready = InstanceStatus.of(StatusFixtures.healthy());
        InstanceStatus degraded = InstanceStatus.of(StatusFixtures.oneRankDown());
        InstanceStatus gone = InstanceStatus.unreachable("x", "no coordinator");
        assertThat(StatusCommand.exitCode(List.of(ready, ready))).isZero();
        assertThat(StatusCommand.exitCode(List.of(ready, degraded))).isEqualTo(3);
        assertThat(StatusCommand.exitCode(List.of(gone, degraded, ready))).isEqualTo(4);
    }
}

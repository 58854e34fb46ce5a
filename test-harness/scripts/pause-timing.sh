#!/usr/bin/env bash
# Times pauses and a partition, as PauseTest and PartitionTest (module cluster) print them: a
# coordinator paused with SIGSTOP, a worker paused, and the coordinator's node cut off in a network
# namespace for 15 s (PartitionTest needs root and `ip netns`; it is skipped elsewhere). Runs both
# tests [runs] times (default 5), prints every run's figures and the medians. PAUSE_TIMING_TESTS
# names other tests to run instead (e.g. PauseTest,PartitionTest,PauseMidBatchTest, whose figures
# are printed too).
# Usage: [PAUSE_TIMING_TESTS=...] test-harness/scripts/pause-timing.sh [runs]
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
runs="${1:-5}"
tests="${PAUSE_TIMING_TESTS:-PauseTest,PartitionTest}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"

median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print "-"; else print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# figure REGEX: the number each run's log holds after REGEX, one per line
figure() { sed -n "s/.*$1 \([0-9][0-9]*\) ms.*/\1/p" "$work"/run-*.log; }

for i in $(seq "$runs"); do
  echo "run $i of $runs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  if ! mvn -B -o -q -pl cluster -am test -Dtest="$tests" -Dsurefire.failIfNoSpecifiedTests=false \
      >"$work/run-$i.log" 2>&1; then
    echo "run $i failed:"; grep -E 'Tests run|FAIL|Exception' "$work/run-$i.log" | head -10
  fi
  grep -hE '^(coordinator paused|coordinator resumed|worker paused|worker resumed|partition)' "$work/run-$i.log" | sed 's/^/  /' || true
done

row() { printf '%-58s %-40s median %s ms\n' "$1" "$(figure "$2" | paste -sd' ')" "$(figure "$2" | median)"; }
echo
echo "over $runs runs (ms), load average $(cut -d' ' -f1-3 /proc/loadavg):"
row "coordinator paused: removed, pages released (SIGSTOP)" "coordinator paused: removed and its pages released on both workers"
row "coordinator resumed: one cluster (SIGCONT)" "coordinator resumed: one cluster"
row "coordinator resumed: first alloc served (SIGCONT)" "coordinator resumed: one cluster [0-9]* ms after SIGCONT, first alloc served"
row "worker paused: a request names it (SIGSTOP)" "worker paused: a request named it"
row "worker paused: removed (SIGSTOP)" "worker paused: its node removed"
row "worker resumed: one cluster (SIGCONT)" "worker resumed: one cluster"
row "worker resumed: first alloc served (SIGCONT)" "worker resumed: one cluster [0-9]* ms after SIGCONT, first alloc served"
row "worker paused mid-batch: the batch named it (sent)" "worker paused mid-batch: the batch answered"
row "partition: coordinator removed (cut)" "partition: coordinator's node removed"
row "partition: pages released on both workers (cut)" "its pages released on both workers after"
row "partition healed: one cluster (link up)" "partition healed: one cluster"
row "partition healed: first alloc served (link up)" "the link came up, first alloc served"

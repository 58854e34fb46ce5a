#!/usr/bin/env bash
# The pause soak as a measurement (issue 26's "10 pause/resume cycles"): PauseSoakTest (module cluster)
# with its 10 cycles, once per seed given (default: 26, 7, 1999), one after the other. Prints every cycle's
# line and each soak's summary line (leaks, over-grants, stuck requests). The build runs the same test as a
# guard of 3 cycles (module cluster-faults); CYCLES=N sets another count here.
# Usage: [CYCLES=N] test-harness/scripts/pause-soak.sh [seed...]
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
cycles="${CYCLES:-10}"
seeds=("$@")
[[ ${#seeds[@]} -gt 0 ]] || seeds=(26 7 1999)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$root"

failed=0
for seed in "${seeds[@]}"; do
  echo "soak of $cycles cycles, seed $seed, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  log="$work/seed-$seed.log"
  if ! mvn -B -o -q -pl cluster -am test -Dtest=PauseSoakTest -Dsurefire.failIfNoSpecifiedTests=false \
      -Dkvpager.pauseSoak.cycles="$cycles" -Dkvpager.pauseSoak.seed="$seed" >"$log" 2>&1; then
    failed=$((failed + 1))
    echo "seed $seed failed:"; grep -E 'Tests run:|FAIL|Expect|Exception' "$log" | head -10 | sed 's/^/  /'
  fi
  grep -hE '^pause soak' "$log" | sed 's/^/  /' || true
done
echo "$((${#seeds[@]} - failed)) of ${#seeds[@]} soaks passed, load average $(cut -d' ' -f1-3 /proc/loadavg)"
[[ $failed -eq 0 ]]

#!/usr/bin/env bash
# docs/sharing.md's measurement in one command: `kvpager demo --compare` on each trace setting, RUNS times
# in a row, each output kept in OUT_DIR; prints per run the demo's totals line, its per-model ratio
# tables (arbitrated / static, arbitrated / first-come) and its grants and invariants lines.
#
# Usage: [RUNS=2] [DURATION=30s] [OUT_DIR=dir] [KVPAGER=command] test-harness/scripts/sharing-compare.sh [SETTING...] [-- DEMO ARGS]
#   SETTING: sb42 sb7 sb11 (steady-bursts, the default preset, at that seed), azure (azure-conv),
#            rot42 rot7 rot11 (rotating), ovl42 ovl7 ovl11 (overlapping); default: all ten.
#   DEMO ARGS go to every run, e.g. `-- --device cuda` on a GPU machine, `-- --load 1.2`.
#   KVPAGER: how to start kvpager (default: the repository's ./kvpager); on a machine that has only a
#            Java runtime and the jars, e.g. KVPAGER="java -cp 'lib/*' io.kvpager.cli.KvPager".
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
runs="${RUNS:-2}"
duration="${DURATION:-30s}"
kvpager="${KVPAGER:-$root/kvpager}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "RUNS must be a positive whole number, got '$runs'" >&2; exit 2; }

settings=()
while [[ $# -gt 0 && "$1" != "--" ]]; do settings+=("$1"); shift; done
[[ "${1:-}" == "--" ]] && shift
extra=("$@")
[[ ${#settings[@]} -gt 0 ]] || settings=(sb42 sb7 sb11 azure rot42 rot7 rot11 ovl42 ovl7 ovl11)

args_of() {
  case "$1" in
    sb[0-9]*) echo "--seed ${1#sb}" ;;
    azure) echo "--trace azure-conv" ;;
    rot[0-9]*) echo "--trace-preset rotating --seed ${1#rot}" ;;
    ovl[0-9]*) echo "--trace-preset overlapping --seed ${1#ovl}" ;;
    *) return 1 ;;
  esac
}
for s in "${settings[@]}"; do
  args_of "$s" >/dev/null || { echo "unknown setting '$s': sb<seed>, azure, rot<seed> or ovl<seed>" >&2; exit 2; }
done

out="${OUT_DIR:-$(mktemp -d -t kvpager-compare.XXXXXX)}"
mkdir -p "$out"
echo "outputs in $out; ${#settings[@]} settings, $runs runs each, --duration $duration ${extra[*]}"
failed=0
for s in "${settings[@]}"; do
  for run in $(seq 1 "$runs"); do
    file="$out/$s-run$run.txt"
    cmd="$kvpager demo --compare --duration $duration $(args_of "$s") ${extra[*]}"
    echo "== $s, run $run: $cmd (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    if ! bash -c "$cmd" >"$file" 2>&1; then
      failed=$((failed + 1))
      echo "   failed; the last lines of $file:"; tail -5 "$file" | sed 's/^/   /'
      continue
    fi
    grep -E '^measured:' "$file" | sed 's/^/   /'
    for table in 'arbitrated / static' 'arbitrated / first-come'; do
      grep -A 6 -F "$table (" "$file" | sed -n '1,2p;4,7p' | sed 's/^/   /'
    done
    policies=$(grep -c '^grants:' "$file" || true)
    echo "   policies run $policies: no sample over-granted in $(grep -c '^grants:.*(no sample over-granted)' "$file" || true)," \
      "invariants held in $(grep -c '^invariants held' "$file" || true)"
    grep -E '^invariants' "$file" | grep -v '^invariants held' | sed 's/^/   /' || true
  done
done
echo "$(( ${#settings[@]} * runs - failed )) of $(( ${#settings[@]} * runs )) runs completed; outputs in $out"
[[ $failed -eq 0 ]]

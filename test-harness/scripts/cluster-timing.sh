#!/usr/bin/env bash
# Times what an operator waits for on one machine: `kvpager status --cluster` against a running
# loopback cluster (a coordinator and two workers), and a node joining that cluster (a worker of
# another instance, from spawn to its ready line, and the join alone as the node logs it), five
# times each; prints every run and the medians. Usage: test-harness/scripts/cluster-timing.sh [runs]
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
kv="$root/kvpager"
runs="${1:-5}"
name="timing-$$"
port=$((20000 + RANDOM % 20000))
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
logback="$work/logback.xml"
sed 's#<logger name="io.kvpager" level="WARN"/>#<logger name="io.kvpager" level="WARN"/><logger name="io.kvpager.cluster.ClusterNode" level="INFO"/>#' \
  "$root/config/logback.xml" >"$logback"
export KVPAGER_OPTS="-Dlogback.configurationFile=$logback"
"$kv" --version >/dev/null   # build first, if needed, outside the timings

now_ms() { date +%s%3N; }
# start NAME args...: spawns a node, waits for its ready line; prints ms from spawn to ready
start() {
  local id="$1"; shift
  local t0; t0="$(now_ms)"
  "$kv" "$@" --cluster-name "$name" --cluster-member-port "$port" --cluster-join "127.0.0.1:$port" \
    >"$work/$id.out" 2>"$work/$id.err" &
  pids+=($!); echo $! >"$work/$id.pid"
  until grep -q '^kvpager ' "$work/$id.out" 2>/dev/null; do
    kill -0 "$(cat "$work/$id.pid")" 2>/dev/null || { cat "$work/$id.err" >&2; exit 1; }
    sleep 0.02
  done
  echo $(( $(now_ms) - t0 ))
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

start w0 worker --instance timing --tp 0 >/dev/null
start w1 worker --instance timing --tp 1 >/dev/null
start co coordinator --instance timing --tp 2 --layers 4 --block-size 64KiB --pages 64 >/dev/null
echo "cluster $name: 2 workers and a coordinator on 127.0.0.1, load average $(cut -d' ' -f1-3 /proc/loadavg)"

status=()
for i in $(seq "$runs"); do
  t0="$(now_ms)"; "$kv" status --cluster --cluster-name "$name" --cluster-join "127.0.0.1:$port" >/dev/null; t=$(( $(now_ms) - t0 ))
  status+=("$t"); echo "status --cluster: $t ms"
done
spawn=(); joined=()
for i in $(seq "$runs"); do
  t="$(start "j$i" worker --instance timing-join --tp 0)"
  j="$(sed -n 's/.* joined cluster .* in \([0-9]*\) ms.*/\1/p' "$work/j$i.err" | head -1)"
  spawn+=("$t"); joined+=("$j"); echo "worker joining: $t ms from spawn to ready, join $j ms"
  kill "$(cat "$work/j$i.pid")"; wait "$(cat "$work/j$i.pid")" 2>/dev/null || true
done
grep -h -i "suspected\|WARN\|ERROR" "$work"/w0.err "$work"/w1.err "$work"/co.err | head -5 || true
echo "median of $runs: status --cluster $(printf '%s\n' "${status[@]}" | median) ms;" \
  "worker from spawn to ready $(printf '%s\n' "${spawn[@]}" | median) ms, join $(printf '%s\n' "${joined[@]}" | median) ms;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"

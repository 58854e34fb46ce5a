#!/usr/bin/env bash
# Times the cluster commands over HTTPS against plain HTTP: starts two loopback clusters of two
# workers and a coordinator each, one plain and one with TLS and a cluster secret (a certificate
# and secret made here, as docs/cluster.md shows), then runs `status --cluster`, `top --cluster
# --frames 1` and `limit --cluster` against each, alternating plain and TLS, RUNS times each
# (default 20), through ./kvpager as a user runs them. Prints every run's milliseconds (from the
# command's start to its exit: JVM start, one request, the output), the medians and the TLS/plain
# ratios. The launcher's AOT cache of each mode is made first (one `status` each, then a wait for
# the cache files), so that every timed run starts from it as a user's commands do after the first;
# KVPAGER_AOT=off times them without one. The certificate is Ed25519, as docs/cluster.md makes it;
# KVPAGER_TIMING_KEY=p256 makes an EC P-256 one instead, KVPAGER_TIMING_ROUNDS=10000 keytool's default key derivation.
# Usage: [KVPAGER_AOT=off] [KVPAGER_TIMING_KEY=ed25519|p256] [KVPAGER_TIMING_ROUNDS=N] test-harness/scripts/tls-timing.sh [runs]
set -euo pipefail
root="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/../.." && pwd)"
kv="$root/kvpager"
runs="${1:-20}"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
"$kv" --version >/dev/null   # build first, if needed, outside the timings

export KVPAGER_TLS_KEY_STORE_PASSWORD="$(head -c 32 /dev/urandom | base64)"
case "${KVPAGER_TIMING_KEY:-ed25519}" in
  ed25519) key=(-keyalg Ed25519) ;;
  p256) key=(-keyalg EC -groupname secp256r1) ;;
  *) echo "KVPAGER_TIMING_KEY must be ed25519 or p256" >&2; exit 2 ;;
esac
# as docs/cluster.md makes it: a random password, so one round of key derivation (KVPAGER_TIMING_ROUNDS=10000: keytool's default)
rounds="${KVPAGER_TIMING_ROUNDS:-1}"
"$JAVA_HOME/bin/keytool" -J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE -J-Dkeystore.pkcs12.macIterationCount="$rounds" \
  -J-Dkeystore.pkcs12.keyPbeIterationCount="$rounds" -genkeypair -alias node "${key[@]}" \
  -dname CN=kvpager-timing -validity 2 -storetype PKCS12 -keystore "$work/cluster.p12" -storepass:env KVPAGER_TLS_KEY_STORE_PASSWORD >/dev/null 2>&1
head -c 32 /dev/urandom | base64 >"$work/cluster.secret"
chmod 600 "$work/cluster.secret"
tls=(--tls-key-store "$work/cluster.p12")
secret=(--cluster-secret-file "$work/cluster.secret")

now_ms() { date +%s%3N; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# start ID NAME MEMBERPORT METRICSPORT args...: spawns a node and waits for its ready line
start() {
  local id="$1" name="$2" port="$3" metrics="$4"; shift 4
  "$kv" "$@" --cluster-name "$name" --cluster-member-port "$port" --cluster-join "127.0.0.1:$port" --metrics-port "$metrics" \
    >"$work/$id.out" 2>"$work/$id.err" &
  pids+=($!); echo $! >"$work/$id.pid"
  until grep -q '^kvpager ' "$work/$id.out" 2>/dev/null; do
    kill -0 "$(cat "$work/$id.pid")" 2>/dev/null || { cat "$work/$id.err" >&2; exit 1; }
    sleep 0.05
  done
}
base=$((20000 + RANDOM % 20000))
plain="plain-$$"; secure="tls-$$"
for c in plain secure; do
  name="${!c}"; port=$base; m=$((base + 100)); extra=()
  if [[ "$c" == secure ]]; then port=$((base + 50)); m=$((base + 200)); extra=("${tls[@]}" "${secret[@]}"); fi
  start "$c-w0" "$name" "$port" "$m" worker --instance timing --tp 0 "${extra[@]}"
  start "$c-w1" "$name" "$port" $((m + 10)) worker --instance timing --tp 1 "${extra[@]}"
  start "$c-co" "$name" "$port" $((m + 20)) coordinator --instance timing --tp 2 --layers 4 --block-size 64KiB --pages 64 "${extra[@]}"
done
plainNode=(--cluster-name "$plain" --node "127.0.0.1:$(sed -n 's#.*metrics at http://[0-9.]*:\([0-9]*\)/metrics.*#\1#p' "$work/plain-co.out")")
tlsNode=(--cluster-name "$secure" --node "127.0.0.1:$(sed -n 's#.*metrics at https://[0-9.]*:\([0-9]*\)/metrics.*#\1#p' "$work/secure-co.out")" "${tls[@]}")
if [[ "${KVPAGER_AOT:-on}" != off ]]; then
  "$kv" status --cluster "${plainNode[@]}" >/dev/null; "$kv" status --cluster "${tlsNode[@]}" >/dev/null
  for i in $(seq 600); do
    [[ $(find "$root/cli/target/run" -name 'kvpager-*-plain.aot' -o -name 'kvpager-*-tls.aot' | wc -l) -ge 2 ]] && break
    sleep 0.5
  done
  echo "AOT caches: $(cd "$root/cli/target/run" && ls kvpager-*.aot | tr '\n' ' ')"
else
  echo "AOT caches: off"
fi
echo "clusters $plain and $secure (${KVPAGER_TIMING_KEY:-ed25519} certificate, $rounds rounds): 2 workers and a coordinator each on 127.0.0.1; load average $(cut -d' ' -f1-3 /proc/loadavg)"

declare -A times
run() {  # run KEY command...: times one command, which must succeed
  local key="$1"; shift
  local t0 t; t0="$(now_ms)"
  "$kv" "$@" >"$work/last.out" 2>"$work/last.err" || { echo "$key failed:"; cat "$work/last.out" "$work/last.err"; exit 1; }
  t=$(( $(now_ms) - t0 )); times[$key]+="$t "
}
for i in $(seq "$runs"); do
  for mode in plain tls; do
    if [[ "$mode" == plain ]]; then node=("${plainNode[@]}"); else node=("${tlsNode[@]}"); fi
    run "status-$mode" status --cluster "${node[@]}"
    run "top-$mode" top --cluster --frames 1 "${node[@]}"
    run "limit-$mode" limit timing $(( (i % 2 + 1) * 64 ))MiB --cluster "${node[@]}"
  done
done
grep -q "APPLIED\|DEFERRED" "$work/last.out" || { echo "the last limit did not apply:"; cat "$work/last.out"; exit 1; }
for cmd in status top limit; do
  p="$(tr ' ' '\n' <<<"${times[$cmd-plain]}" | grep . | median)"; t="$(tr ' ' '\n' <<<"${times[$cmd-tls]}" | grep . | median)"
  echo "$cmd --cluster: plain HTTP ${times[$cmd-plain]}ms"
  echo "$cmd --cluster: HTTPS      ${times[$cmd-tls]}ms"
  awk -v c="$cmd" -v p="$p" -v t="$t" 'BEGIN {printf "%s: median plain %d ms, HTTPS %d ms, HTTPS/plain %.2f\n", c, p, t, t / p}'
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"

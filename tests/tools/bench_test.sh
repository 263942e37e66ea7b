#!/usr/bin/env bash
# Short runs of the `netbuf` benchmarks and load generators, checked through their JSON output:
# every expected row is there, with sane values and no errors (bench strings, bench echo, also
# with --impl all, bench accept; load echo against serve echo and load rpc against serve rpc, each
# a separate process).
# Usage: bench_test.sh <path to the netbuf executable>
set -uo pipefail
netbuf="$1"
python=${NETBUF_PYTHON:-python3}
command -v "$python" >/dev/null || { echo "FAIL: no $python to parse the JSON (apt-get install python3)"; exit 1; }
tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# run NAME CHECK-PROGRAM ARGS...: runs netbuf ARGS, expects exit 0, then runs the Python CHECK
# with the parsed JSON as `d` (an assertion failure is a test failure).
run() {
  local name="$1" check="$2"
  shift 2
  "$netbuf" "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
  local rc=$?
  [ "$rc" -eq 0 ] || fail "$name: netbuf $* exited $rc: $(tail -3 "$tmp/$name.err")"
  "$python" - "$tmp/$name.json" <<PY || fail "$name: the JSON output fails its check"
import json, sys
d = json.load(open(sys.argv[1]))
$check
print("ok: $name")
PY
}

run bench_strings '
rows = d["results"]
assert isinstance(d["isa"], str) and d["seconds"] == 0.2, d
names = {r["benchmark"] for r in rows}
assert {"writeUtf8", "writeAscii"} <= {n.split("/")[0] for n in names}, names
assert len({(r["benchmark"], r["workload"]) for r in rows}) == len(rows) > 10
for r in rows:
    assert r["input_bytes"] > 0, r
    assert r["netbuf"]["ns_per_op"] > 0 and r["netbuf"]["ops_per_s"] > 0, r
    assert r["ratio"]["memcpy"] > 0, r
' bench strings --seconds 0.2 --json

run bench_echo '
assert d["suite"] == "echo" and d["ok"] is True, d
rows = d["results"]
cases = {(r["impl"], r["connections"], r["size"], r["window"]) for r in rows}
want = {(i, c, n, w) for i in ("asio", "netbuf") for c in (1, 16) for n in (128, 16384) for w in (1, 64)}
assert cases == want and len(rows) == 16, sorted(cases)
for r in rows:
    assert r["messages"] > 0 and r["msgs_per_s"] > 0, r
    assert r["errors"] == 0 and r["mismatches"] == 0 and r["connections_opened"] == r["connections"], r
    assert 0 < r["p50_us"] <= r["p99_us"] <= r["p999_us"] <= r["max_us"], r
' bench echo --seconds 0.2 --json

# --impl all: netbuf also on io_uring, unless the system refuses it (then skipped, with the reason).
run bench_echo_all '
assert d["suite"] == "echo" and d["ok"] is True, d
skipped = d.get("skipped", [])
assert skipped == [] or ([s["impl"] for s in skipped] == ["netbuf-io_uring"] and skipped[0]["reason"]), skipped
impls = ["asio", "netbuf"] + ([] if skipped else ["netbuf-io_uring"])
rows = d["results"]
assert len(rows) == 8 * len(impls), len(rows)
# case by case, each on every server back to back, in the same order
assert [r["impl"] for r in rows] == impls * 8, [r["impl"] for r in rows]
for r in rows:
    assert r["messages"] > 0 and r["errors"] == 0 and r["mismatches"] == 0, r
' bench echo --impl all --seconds 0.1 --json

run bench_accept '
assert d["suite"] == "accept" and d["ok"] is True and d["loops"] == 2, d
assert [r["design"] for r in d["results"]] == ["round_robin", "per_loop"], d
for r in d["results"]:
    assert r["connections_per_s"] > 0 and r["errors"] == 0, r
' bench accept --seconds 0.2 --json

# start NAME ARGS...: starts netbuf serve ARGS in the background and waits for its port.
start() {
  local name="$1"
  shift
  "$netbuf" serve "$@" >"$tmp/$name.out" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/$name.out")
    [ -n "$port" ] && return 0
    sleep 0.1
  done
  fail "serve $*: no 'listening on' line"
  return 1
}
stop() {
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "serve: exit status $?"
  server_pid=
}

if start echo echo --port 0; then
  run load_echo '
assert (d["connections"], d["size"], d["window"], d["threads"]) == (4, 256, 8, 2), d
assert d["messages"] > 0 and d["errors"] == 0 and d["mismatches"] == 0, d
assert d["connections_opened"] == 4 and d["server_cpu_s"] >= 0, d
assert abs(d["mb_per_s"] - d["msgs_per_s"] * 256 / 1e6) <= 0.01 * d["mb_per_s"] + 0.01, d
' load echo --port "$port" --connections 4 --size 256 --window 8 --threads 2 --duration 0.3 \
    --warmup 0.1 --server-pid "$server_pid" --json
  stop
fi

if start rpc rpc --port 0; then
  for method in echo add put-get; do
    run "load_rpc_$method" "
assert d['method'] == '$method' and d['calls'] > 0 and d['errors'] == 0, d
assert d['connections_opened'] == 2 and d['calls_per_s'] > 0, d
assert 0 < d['p50_us'] <= d['p99_us'] <= d['max_us'], d
" load rpc --port "$port" --connections 2 --window 4 --seconds 0.3 --warmup 0.1 --method "$method" --json
  done
  stop
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "bench: all checks passed"

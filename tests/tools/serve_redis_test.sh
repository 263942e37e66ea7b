#!/usr/bin/env bash
# `netbuf serve redis` driven by redis-cli: with --threads 1 and --threads 3 (sharded: keys of
# every shard in one MSET/MGET), SET/GET, a RESP3 reply, the counters printed at SIGTERM. A missing
# redis-cli fails the test. Usage: serve_redis_test.sh NETBUF_BINARY
set -euo pipefail
netbuf=$1
command -v redis-cli >/dev/null || { echo "FAIL: no redis-cli to run the peer (apt-get install redis-tools)"; exit 1; }
tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  cat "$tmp/out"
  exit 1
}

for threads in 1 3; do
  "$netbuf" serve redis --port 0 --threads "$threads" >"$tmp/out" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q '^listening on ' "$tmp/out" && break
    sleep 0.1
  done
  grep -q '^listening on 127.0.0.1:' "$tmp/out" || fail "no 'listening on' line from serve redis"
  port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
  cli() { timeout 20 redis-cli -h 127.0.0.1 -p "$port" "$@"; }

  [ "$(cli PING)" = PONG ] || fail "PING"
  [ "$(cli SET greeting hello)" = OK ] || fail "SET"
  [ "$(cli GET greeting)" = hello ] || fail "GET"
  [ "$(cli MSET a 1 b 2 c 3 d 4 e 5)" = OK ] || fail "MSET"
  [ "$(cli MGET e d nope a | tr '\n' ' ')" = "5 4  1 " ] || fail "MGET: $(cli MGET e d nope a)"
  [ "$(cli DBSIZE)" = 6 ] || fail "DBSIZE"
  # -3: redis-cli sends HELLO 3 first (two commands each).
  [ "$(cli -3 --no-raw ZADD z 1.5 m >/dev/null; cli -3 --no-raw ZSCORE z m)" = "(double) 1.5" ] ||
    fail "RESP3 ZSCORE"
  echo "ok: redis-cli, $threads thread(s)"

  kill -TERM "$server_pid"
  wait "$server_pid" || fail "serve redis exited $?"
  server_pid=
  grep -q '^stopped (SIGTERM); 8 connection(s), 10 command(s), 0 protocol error(s)$' "$tmp/out" ||
    fail "unexpected counters"
done
echo "ok: stopped"

#!/usr/bin/env bash
# examples/kv_server against examples/kv_client, over TCP and over a Unix domain socket; the
# server is stopped with SIGTERM (its graceful shutdown) each time.
# Usage: kv_example_test.sh KV_SERVER KV_CLIENT
set -euo pipefail
server_bin=$1
client_bin=$2
tmp=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

start() {
  "$server_bin" "$@" >"$tmp/out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    grep -q '^kv_server listening on ' "$tmp/out" && return 0
    sleep 0.1
  done
  echo "FAIL: kv_server $* did not start"; cat "$tmp/out"; exit 1
}
stop() {
  kill -TERM "$pid"
  wait "$pid" || { echo "FAIL: kv_server exited $?"; cat "$tmp/out"; exit 1; }
  pid=
  grep -q '^kv_server stopped after [0-9]* requests' "$tmp/out" || { cat "$tmp/out"; exit 1; }
}

start --port 0
port=$(sed -n 's/^kv_server listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
timeout 60 "$client_bin" --port "$port" --count 5000
stop

start --unix "$tmp/kv.sock"
timeout 60 "$client_bin" --unix "$tmp/kv.sock" --count 5000
stop
echo "ok"

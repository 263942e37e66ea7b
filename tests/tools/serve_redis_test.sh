#!/usr/bin/env bash
# `netbuf serve redis` driven by redis-cli: with --threads 1 and --threads 3 (sharded: keys of
# every shard in one MSET/MGET), SET/GET, a RESP3 reply, the counters printed at SIGTERM; then
# with TLS (--tls-cert, --tls-key with a throwaway self-signed certificate) driven by redis-cli
# --tls. A missing redis-cli or openssl fails the test. Usage: serve_redis_test.sh NETBUF_BINARY
set -euo pipefail
netbuf=$1
command -v redis-cli >/dev/null || { echo "FAIL: no redis-cli to run the peer (apt-get install redis-tools)"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL: no openssl to make the certificate (apt-get install openssl)"; exit 1; }
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
  # The line after 'listening on' (printed before any connection is served) names the transport.
  grep -Eq '^transport: (asio|io_uring)$' "$tmp/out" || fail "no 'transport:' line from serve redis"
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

# TLS: a self-signed certificate for localhost and 127.0.0.1 (its own CA for redis-cli).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$tmp/tls.key" -out "$tmp/tls.pem" \
  2>"$tmp/out" || fail "openssl req"
"$netbuf" serve redis --port 0 --tls-cert "$tmp/tls.pem" --tls-key "$tmp/tls.key" >"$tmp/out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$tmp/out" && break
  sleep 0.1
done
grep -q '^listening on 127.0.0.1:' "$tmp/out" || fail "no 'listening on' line from serve redis --tls-cert"
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
tcli() { timeout 20 redis-cli --tls -h 127.0.0.1 -p "$port" "$@"; }
[ "$(tcli --cacert "$tmp/tls.pem" PING)" = PONG ] || fail "PING over TLS"
[ "$(tcli --cacert "$tmp/tls.pem" SET greeting 'hello over tls')" = OK ] || fail "SET over TLS"
[ "$(tcli --cacert "$tmp/tls.pem" GET greeting)" = "hello over tls" ] || fail "GET over TLS"
if tcli PING 2>&1 | grep -q PONG; then fail "redis-cli --tls without the CA got an answer"; fi
echo "ok: tls"
kill -TERM "$server_pid"
wait "$server_pid" || fail "serve redis --tls-cert exited $?"
server_pid=
# (redis-cli may try again after a failed handshake: the connections are not counted here.)
grep -Eq '^stopped \(SIGTERM\); [0-9]+ connection\(s\), 3 command\(s\), 0 protocol error\(s\)$' "$tmp/out" ||
  fail "unexpected counters"
echo "ok: tls stopped"

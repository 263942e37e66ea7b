#!/usr/bin/env bash
# `netbuf serve http` driven by real peers: curl (GET /, POST /echo, files under --root with a
# range, paths that try to leave the root, a missing path) and a raw-socket Python peer
# (pipelined requests, a smuggling attempt answered 400 and closed), then the counters printed at
# SIGTERM; then HTTPS (--tls-cert, --tls-key with a throwaway self-signed certificate) against curl
# (ALPN http/1.1) and `netbuf http get https://...` (verifying with --cacert, refused without it
# with the reason, --insecure). A missing peer fails the test. Usage: serve_http_test.sh NETBUF_BINARY
set -euo pipefail
netbuf=$1
python=${NETBUF_PYTHON:-python3}
command -v curl >/dev/null || { echo "FAIL: no curl to run the peer (apt-get install curl)"; exit 1; }
command -v "$python" >/dev/null || { echo "FAIL: no $python to run the peer (apt-get install python3)"; exit 1; }
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

mkdir -p "$tmp/root/sub"
printf 'file contents\n' >"$tmp/root/sub/a.txt"
echo secret >"$tmp/secret.txt"

"$netbuf" serve http --port 0 --root "$tmp/root" >"$tmp/out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$tmp/out" && break
  sleep 0.1
done
grep -q '^listening on ' "$tmp/out" || fail "no 'listening on' line from serve http"
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
base=http://127.0.0.1:$port

# Every peer is bounded in time.
c() { timeout 20 curl --no-progress-meter "$@"; }
status() { c -o /dev/null -w '%{http_code}' "$@"; }

got=$(c "$base/") || fail "GET /: curl exited $?"
[ "$got" = "Hello, World!" ] || fail "GET /: $got"
# The line after 'listening on' (printed before any connection is served) names the transport.
grep -Eq '^transport: (asio|io_uring)$' "$tmp/out" || fail "no 'transport:' line from serve http"
got=$(c --data-binary 'some body' -H 'Content-Type: text/x-test' "$base/echo")
[ "$got" = "some body" ] || fail "POST /echo: $got"
got=$(c "$base/files/sub/a.txt")
[ "$got" = "file contents" ] || fail "GET /files/sub/a.txt: $got"
got=$(c -r 0-3 "$base/files/sub/a.txt")
[ "$got" = "file" ] || fail "GET /files/sub/a.txt bytes 0-3: $got"
# Out of the root, plainly and percent-encoded (--path-as-is: curl would normalise "..").
code=$(status --path-as-is "$base/files/../secret.txt")
[ "$code" = 404 ] || fail "/files/../secret.txt: $code"
code=$(status --path-as-is "$base/files/%2e%2e/secret.txt")
[ "$code" = 404 ] || fail "/files/%2e%2e/secret.txt: $code"
code=$(status "$base/missing")
[ "$code" = 404 ] || fail "/missing: $code"
echo "ok: curl"

timeout 20 "$python" - "$port" <<'PY' || fail "python peer"
import socket, sys
port = int(sys.argv[1])

def read_until_closed(s):
    got = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        got += chunk
    return got

# Three pipelined requests in one write: three answers, in order; the last one closes.
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
          b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
          b"GET /missing HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
got = read_until_closed(s)
assert got.count(b"HTTP/1.1 ") == 3, got
first, second, third = (got.index(b"Hello, World!"), got.index(b"\r\n\r\nabc"),
                        got.index(b"HTTP/1.1 404"))
assert first < second < third, got
assert b"connection: close" in got[third:], got

# A smuggling attempt: 400, connection: close, closed, and the smuggled request unanswered.
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n")
got = read_until_closed(s)
assert got.startswith(b"HTTP/1.1 400 Bad Request\r\n"), got
assert b"connection: close" in got, got
assert got.count(b"HTTP/1.1 ") == 1, got
PY
echo "ok: python"

kill -TERM "$server_pid"
wait "$server_pid" || fail "serve http exited $?"
server_pid=
# 9 connections (7 curl, 2 python); requests answered by a route: 6 by curl (the files route
# answers its own 404s), 2 pipelined; refused: the smuggling attempt; not found: /missing twice.
grep -q '^stopped (SIGTERM); 9 connection(s), 8 request(s), 1 refused, 2 not found$' "$tmp/out" ||
  fail "unexpected counters"
echo "ok: stopped"

# HTTPS: a self-signed certificate for localhost and 127.0.0.1 (its own CA for the clients).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$tmp/tls.key" -out "$tmp/tls.pem" \
  2>"$tmp/openssl.log" || { cat "$tmp/openssl.log" >>"$tmp/out"; fail "openssl req"; }
"$netbuf" serve http --port 0 --tls-cert "$tmp/tls.pem" --tls-key "$tmp/tls.key" >"$tmp/out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$tmp/out" && break
  sleep 0.1
done
grep -q '^listening on ' "$tmp/out" || fail "no 'listening on' line from serve http --tls-cert"
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
base=https://localhost:$port

got=$(c --cacert "$tmp/tls.pem" -w ' %{http_version}' "$base/") || fail "curl https GET /: exited $?"
[ "$got" = "Hello, World! 1.1" ] || fail "curl https GET /: $got"
got=$(c --cacert "$tmp/tls.pem" -v -o /dev/null "$base/" 2>&1) || fail "curl -v https GET /"
grep -q 'ALPN: server accepted http/1.1' <<<"$got" || fail "no ALPN http/1.1 in: $got"
got=$(c --cacert "$tmp/tls.pem" --data-binary 'tls body' "$base/echo")
[ "$got" = "tls body" ] || fail "curl https POST /echo: $got"
echo "ok: https curl"

h() { timeout 20 "$netbuf" http get "$@"; }
got=$(h "$base/" --cacert "$tmp/tls.pem" 2>"$tmp/err") || { cat "$tmp/err" >>"$tmp/out"; fail "http get --cacert"; }
[ "$got" = "Hello, World!" ] || fail "http get --cacert: $got"
if h "$base/" >/dev/null 2>"$tmp/err"; then fail "http get https without the CA succeeded"; fi
grep -q "^netbuf http: $base/: the peer's certificate does not chain to a trusted root$" "$tmp/err" ||
  { cat "$tmp/err" >>"$tmp/out"; fail "http get https without the CA: no reason given"; }
got=$(h "https://127.0.0.1:$port/" --insecure 2>"$tmp/err") || { cat "$tmp/err" >>"$tmp/out"; fail "http get --insecure"; }
[ "$got" = "Hello, World!" ] || fail "http get --insecure: $got"
grep -q 'warning: --insecure' "$tmp/err" || fail "http get --insecure: no warning"
echo "ok: https netbuf http get"

kill -TERM "$server_pid"
wait "$server_pid" || fail "serve http --tls-cert exited $?"
server_pid=
# 6 connections (3 curl, 3 netbuf http get; the one refused in the handshake sent no request).
grep -q '^stopped (SIGTERM); 6 connection(s), 5 request(s), 0 refused, 0 not found$' "$tmp/out" ||
  fail "unexpected counters"
echo "ok: https stopped"

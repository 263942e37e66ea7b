#!/usr/bin/env bash
# `netbuf serve echo` over each transport it offers, each driven by a peer written with Python's
# socket module: TCP (also on --transport asio and io_uring), a Unix domain socket (--unix), UDP
# (--udp); then TLS (--tls-cert, --tls-key with a throwaway self-signed certificate) driven by
# `openssl s_client` and `netbuf load echo --tls` (verifying with --cacert, refused without it,
# --insecure). A missing peer fails the test.
# Usage: serve_echo_test.sh NETBUF_BINARY
set -euo pipefail
netbuf=$1
here=$(cd "$(dirname "$0")" && pwd)
peer=$here/../transport/unix_peer.py
python=${NETBUF_PYTHON:-python3}
command -v "$python" >/dev/null || { echo "FAIL: no $python to run the peer (apt-get install python3)"; exit 1; }
command -v openssl >/dev/null || { echo "FAIL: no openssl to run the TLS peer (apt-get install openssl)"; exit 1; }
tmp=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# Starts the server with the given options; waits (10 s at most) for its 'listening on' line.
start() {
  "$netbuf" serve echo "$@" >"$tmp/out" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do
    grep -q '^listening on ' "$tmp/out" && return 0
    sleep 0.1
  done
  echo "FAIL: no 'listening on' line from serve echo $*"; cat "$tmp/out"; exit 1
}
# Stops it with SIGTERM and checks its last line.
stop() {
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "FAIL: serve echo exited $?"; cat "$tmp/out"; exit 1; }
  server_pid=
  grep -q '^stopped (SIGTERM); 1 connection(s) served' "$tmp/out" ||
    { echo "FAIL: unexpected output"; cat "$tmp/out"; exit 1; }
}

# One TCP connection to the server's port: 1000 lines sent, all echoed.
tcp_peer() {
  local port
  port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
  "$python" - "$port" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
data = b"".join(b"tcp %d\n" % i for i in range(1000))
s.sendall(data)
got = b""
while len(got) < len(data):
    chunk = s.recv(65536)
    if not chunk:
        break
    got += chunk
assert got == data, (len(got), len(data))
s.close()
PY
}

# TCP
start --port 0
tcp_peer
stop
echo "ok: tcp"

# --transport: the line after 'listening on' names what the loops run. io_uring either serves or,
# where the system refuses it, fails at once: exit 1 and one line saying why.
start --port 0 --transport asio
for _ in $(seq 50); do grep -q '^transport: ' "$tmp/out" && break; sleep 0.1; done
grep -q '^transport: asio$' "$tmp/out" || { echo "FAIL: no 'transport: asio' line"; cat "$tmp/out"; exit 1; }
tcp_peer
stop
"$netbuf" serve echo --port 0 --transport io_uring >"$tmp/out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q '^listening on ' "$tmp/out" && break
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
if grep -q '^listening on ' "$tmp/out"; then
  for _ in $(seq 50); do grep -q '^transport: ' "$tmp/out" && break; sleep 0.1; done
  grep -q '^transport: io_uring$' "$tmp/out" || { echo "FAIL: no 'transport: io_uring' line"; cat "$tmp/out"; exit 1; }
  tcp_peer
  stop
  echo "ok: --transport asio, io_uring"
else
  rc=0
  wait "$server_pid" || rc=$?
  server_pid=
  [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
    grep -q '^netbuf serve echo: .*io_uring' "$tmp/out" ||
    { echo "FAIL: serve echo --transport io_uring exited $rc"; cat "$tmp/out"; exit 1; }
  echo "ok: --transport asio; io_uring unavailable here: $(cat "$tmp/out")"
fi

# Unix domain socket
sock=$tmp/echo.sock
start --unix "$sock"
grep -q "^listening on unix:$sock\$" "$tmp/out"
out=$("$python" "$peer" client "$sock" 1000) || { echo "FAIL: unix peer: $out"; exit 1; }
[[ $out == ok* ]] || { echo "FAIL: unix peer: $out"; exit 1; }
stop
[ ! -e "$sock" ] || { echo "FAIL: $sock left behind"; exit 1; }
echo "ok: unix"

# UDP
start --udp --port 0
port=$(sed -n 's/^listening on udp:.*:\([0-9]*\)$/\1/p' "$tmp/out")
"$python" - "$port" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(10)
for i in range(50):
    msg = b"datagram %d " % i + b"x" * i
    s.sendto(msg, ("127.0.0.1", int(sys.argv[1])))
    got, peer = s.recvfrom(65536)
    assert got == msg, (got, msg)
s.close()
PY
kill -TERM "$server_pid"
wait "$server_pid"
server_pid=
grep -q '^stopped (SIGTERM); 50 datagram(s) echoed' "$tmp/out" || { cat "$tmp/out"; exit 1; }
echo "ok: udp"

# TLS: a self-signed certificate for localhost and 127.0.0.1 (its own CA for the clients).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$tmp/tls.key" -out "$tmp/tls.pem" \
  2>"$tmp/openssl.log" || { echo "FAIL: openssl req"; cat "$tmp/openssl.log"; exit 1; }
start --port 0 --tls-cert "$tmp/tls.pem" --tls-key "$tmp/tls.key"
port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$tmp/out")
# s_client ends at the end of its input: the pause lets the echo come back first.
got=$( (printf 'hello over tls\n'; sleep 2) | timeout 20 openssl s_client -connect "127.0.0.1:$port" \
  -servername localhost -CAfile "$tmp/tls.pem" -verify_return_error 2>&1) ||
  { echo "FAIL: openssl s_client exited $?"; echo "$got"; exit 1; }
grep -q '^hello over tls$' <<<"$got" || { echo "FAIL: no echo through s_client"; echo "$got"; exit 1; }
grep -q 'Verify return code: 0 (ok)' <<<"$got" || { echo "FAIL: s_client did not verify"; echo "$got"; exit 1; }
echo "ok: tls (openssl s_client)"

load() { timeout 30 "$netbuf" load echo --port "$port" --tls --connections 2 --window 4 \
  --duration 0.3 --warmup 0.1 "$@"; }
load --cacert "$tmp/tls.pem" >"$tmp/load" 2>&1 || { echo "FAIL: load echo --tls --cacert"; cat "$tmp/load"; exit 1; }
grep -q 'over TLS' "$tmp/load" || { echo "FAIL: load echo --tls says nothing of TLS"; cat "$tmp/load"; exit 1; }
if load >"$tmp/load" 2>&1; then echo "FAIL: load echo --tls without the CA succeeded"; cat "$tmp/load"; exit 1; fi
grep -q 'first error: TLS handshake: .*trusted root' "$tmp/load" ||
  { echo "FAIL: load echo --tls without the CA: no reason given"; cat "$tmp/load"; exit 1; }
load --insecure >"$tmp/load" 2>&1 || { echo "FAIL: load echo --tls --insecure"; cat "$tmp/load"; exit 1; }
grep -q 'warning: --insecure' "$tmp/load" || { echo "FAIL: --insecure without a warning"; cat "$tmp/load"; exit 1; }
echo "ok: tls (netbuf load echo --tls)"

kill -TERM "$server_pid"
wait "$server_pid" || { echo "FAIL: serve echo exited $?"; cat "$tmp/out"; exit 1; }
server_pid=
# s_client, then 2 connections for each of the three loads (those refused were accepted first).
grep -q '^stopped (SIGTERM); 7 connection(s) served' "$tmp/out" || { echo "FAIL: unexpected output"; cat "$tmp/out"; exit 1; }
echo "ok: tls stopped"

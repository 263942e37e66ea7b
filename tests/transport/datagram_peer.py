#!/usr/bin/env python3
"""UDP interop peer for netbuf's DatagramChannel, written with Python's socket module only.

Run by tests/transport/datagram_channel_thread_test.cpp in one of two modes:

    python3 datagram_peer.py client <port> <readBufferSize>
        drives a netbuf UDP echo server on 127.0.0.1:<port> (whose read buffer is
        <readBufferSize> bytes): datagrams of several sizes (empty, one byte, exactly the read
        buffer), a burst, a connected socket, and one datagram larger than the read buffer (the
        server drops it: no echo, and the next datagram is still echoed). Exits 0 and prints
        "all checks passed" when every check passed; prints what failed and exits 1 otherwise.

    python3 datagram_peer.py server
        binds 127.0.0.1:0, prints "port <n>" on its first line, echoes every datagram back to its
        sender until it receives b"quit" (answered with b"bye"), then prints "echoed <count>" and
        exits 0; exits 1 after 20 s without a datagram.

Every socket has a timeout and the whole run is bounded by an alarm, so the test never hangs.
"""
import os
import signal
import socket
import sys

TIMEOUT = 5.0


def fail(message):
    print("datagram_peer.py: FAILED: " + message)
    sys.exit(1)


def udp_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(TIMEOUT)
    s.bind(("127.0.0.1", 0))
    return s


def echo_once(sock, server, payload, connected=False):
    if connected:
        sock.send(payload)
    else:
        sock.sendto(payload, server)
    data, sender = sock.recvfrom(70000)
    if sender != server:
        fail("echo of %d bytes came from %r, not %r" % (len(payload), sender, server))
    if data != payload:
        fail("echo of %d bytes differs: got %d bytes" % (len(payload), len(data)))


def run_client(port, read_buffer_size):
    server = ("127.0.0.1", port)
    sock = udp_socket()
    # Sizes: empty, tiny, typical, exactly the read buffer (the largest read whole).
    for size in (0, 1, 5, 100, 1400, read_buffer_size):
        echo_once(sock, server, os.urandom(size))
    print("sizes ok")

    # A burst: sent before any echo is read; every echo arrives (loopback keeps them).
    burst = [b"burst-%03d-" % i + os.urandom(i) for i in range(32)]
    for p in burst:
        sock.sendto(p, server)
    got = []
    for _ in burst:
        data, sender = sock.recvfrom(70000)
        if sender != server:
            fail("burst echo from %r" % (sender,))
        got.append(data)
    if sorted(got) != sorted(burst):
        fail("burst echoes differ from what was sent")
    print("burst ok")

    # Larger than the server's read buffer: dropped (no echo); the server goes on.
    sock.sendto(b"x" * (read_buffer_size + 1), server)
    sock.sendto(b"after-truncated", server)
    data, _ = sock.recvfrom(70000)
    if data != b"after-truncated":
        fail("after an oversized datagram, expected b'after-truncated', got %d bytes %r"
             % (len(data), data[:40]))
    print("oversized dropped ok")

    # A connected socket: send()/recv() without addresses.
    conn = udp_socket()
    conn.connect(server)
    for i in range(10):
        echo_once(conn, server, b"connected-%d" % i, connected=True)
    conn.close()
    print("connected ok")
    sock.close()
    print("all checks passed")


def run_server():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(20.0)
    print("port %d" % sock.getsockname()[1], flush=True)
    echoed = 0
    while True:
        try:
            data, sender = sock.recvfrom(70000)
        except socket.timeout:
            print("no datagram for 20 s after %d echoes" % echoed)
            sys.exit(1)
        if data == b"quit":
            sock.sendto(b"bye", sender)
            break
        sock.sendto(data, sender)
        echoed += 1
    sock.close()
    print("echoed %d" % echoed)


def main():
    signal.alarm(60)  # a hard bound on the whole run
    if len(sys.argv) == 4 and sys.argv[1] == "client":
        run_client(int(sys.argv[2]), int(sys.argv[3]))
    elif len(sys.argv) == 2 and sys.argv[1] == "server":
        run_server()
    else:
        print("usage: datagram_peer.py client <port> <readBufferSize> | server", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    try:
        main()
    except socket.timeout as e:
        fail("timed out: %s" % e)

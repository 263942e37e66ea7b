#!/usr/bin/env python3
"""A Unix domain stream socket peer for netbuf's tests, written with Python's socket module only.

    unix_peer.py client PATH COUNT   connects, sends COUNT lines "line <i>\\n", reads the echo of
                                     all of them, checks it, prints "ok <bytes>" and exits 0
    unix_peer.py server PATH         listens on PATH, prints "ready", echoes one connection until
                                     the peer half-closes, then exits 0
Every operation has a 10 s timeout; any failure exits 1 with a message.
"""
import os
import socket
import sys


def client(path, count):
    expected = b"".join(b"line %d\n" % i for i in range(count))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(expected)
        got = b""
        while len(got) < len(expected):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    if got != expected:
        print("mismatch: got %d bytes, expected %d" % (len(got), len(expected)))
        return 1
    print("ok %d" % len(got))
    return 0


def server(path):
    if os.path.exists(path):
        os.unlink(path)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as ls:
        ls.settimeout(10)
        ls.bind(path)
        ls.listen(1)
        print("ready", flush=True)
        conn, _ = ls.accept()
        with conn:
            conn.settimeout(10)
            total = 0
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                conn.sendall(chunk)
                total += len(chunk)
    os.unlink(path)
    print("echoed %d" % total)
    return 0


def main():
    try:
        if sys.argv[1] == "client":
            return client(sys.argv[2], int(sys.argv[3]))
        if sys.argv[1] == "server":
            return server(sys.argv[2])
    except Exception as e:  # reported to the test, which prints it
        print("error: %r" % (e,))
        return 1
    print("usage: unix_peer.py client PATH COUNT | server PATH")
    return 1


if __name__ == "__main__":
    sys.exit(main())

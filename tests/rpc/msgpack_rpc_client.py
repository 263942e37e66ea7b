#!/usr/bin/env python3
"""MessagePack-RPC interop check against netbuf's demo RPC service (tools/rpc_service.hpp).

Run by tests/rpc/message_pack_rpc_python_thread_test.cpp as
    python3 msgpack_rpc_client.py <port>
against a server on 127.0.0.1:<port>. Uses python3-msgpack over a plain socket (no RPC library),
so every byte on the wire is produced and checked by an independent implementation. Exits 0 when
every check passed; prints what failed and exits 1 otherwise (2: msgpack is not installed).
"""
import socket
import sys

try:
    import msgpack
except ImportError:
    print("msgpack_rpc_client.py: the Python module 'msgpack' is missing "
          "(Debian: apt-get install python3-msgpack)", file=sys.stderr)
    sys.exit(2)

REQUEST, RESPONSE, NOTIFICATION = 0, 1, 2


class Conn:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.packer = msgpack.Packer(use_bin_type=True)
        self.unpacker = msgpack.Unpacker(raw=False)
        self.next_id = 1

    def send(self, *messages):
        self.sock.sendall(b"".join(self.packer.pack(m) for m in messages))

    def request(self, method, params):
        msgid = self.next_id
        self.next_id += 1
        return msgid, [REQUEST, msgid, method, params]

    def read(self, n):
        """The next n messages, in arrival order."""
        out = []
        for msg in self.unpacker:
            out.append(msg)
            if len(out) == n:
                return out
        while len(out) < n:
            data = self.sock.recv(65536)
            if not data:
                raise AssertionError("connection closed after %d of %d responses" % (len(out), n))
            self.unpacker.feed(data)
            for msg in self.unpacker:
                out.append(msg)
                if len(out) == n:
                    break
        return out

    def call(self, method, params):
        msgid, req = self.request(method, params)
        self.send(req)
        [resp] = self.read(1)
        check(resp[0] == RESPONSE and resp[1] == msgid, "response to %s: %r" % (method, resp))
        return resp[2], resp[3]

    def nothing_more(self, seconds=0.3):
        """True when no byte arrives within seconds."""
        self.sock.settimeout(seconds)
        try:
            data = self.sock.recv(65536)
            if data:
                self.unpacker.feed(data)
                return False
            return True
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(10)


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def main():
    port = int(sys.argv[1])
    c = Conn(port)

    # 1. A single call.
    err, res = c.call("add", [1, 2])
    check(err is None and res == 3, "add(1, 2) = %r, error %r" % (res, err))
    err, res = c.call("add", [-5, 2**64 - 10])
    check(err is None and res == 2**64 - 15, "add(-5, 2^64-10) = %r, error %r" % (res, err))
    err, res = c.call("add", [2**64 - 1, 1])
    check(err is not None and "OverflowError" in err and res is None,
          "add overflow: error %r, result %r" % (err, res))

    # 2. Pipelining: 50 requests sent before reading anything.
    reqs = [c.request("echo", [i, "s%d" % i]) for i in range(50)]
    c.send(*[r for _, r in reqs])
    resps = c.read(50)
    by_id = {r[1]: r for r in resps}
    check(len(by_id) == 50, "pipelined: %d distinct msgids" % len(by_id))
    for i, (msgid, _) in enumerate(reqs):
        r = by_id.get(msgid)
        check(r is not None and r[0] == RESPONSE and r[2] is None and r[3] == [i, "s%d" % i],
              "pipelined echo %d: %r" % (i, r))

    # 3. Out-of-order completion: sleep 200, sleep 10, echo, all sent at once.
    slow, r1 = c.request("sleep", [200])
    mid, r2 = c.request("sleep", [10])
    fast, r3 = c.request("echo", ["now"])
    c.send(r1, r2, r3)
    resps = c.read(3)
    order = [r[1] for r in resps]
    check(order != [slow, mid, fast], "responses came in request order: %r" % order)
    check(order == [fast, mid, slow], "expected echo, sleep 10, sleep 200; got %r" % order)
    by_id = {r[1]: r for r in resps}
    check(by_id[slow][3] == 200 and by_id[mid][3] == 10 and by_id[fast][3] == ["now"],
          "out-of-order results: %r" % resps)

    # 4. bin stays bin, str stays str.
    blob = bytes(range(256)) * 3
    err, res = c.call("put", ["k", blob])
    check(err is None and res is None, "put: error %r result %r" % (err, res))
    err, res = c.call("get", ["k"])
    check(err is None and isinstance(res, bytes) and res == blob,
          "get returned %s %r" % (type(res).__name__, res[:16] if res else res))
    err, res = c.call("get", ["missing"])
    check(err is None and res is None, "get(missing) = %r" % (res,))
    err, res = c.call("put", ["k2", "a str"])
    check(err is not None and "TypeError" in err, "put with a str value: error %r" % (err,))
    err, res = c.call("echo", ["text", b"bytes"])
    check(err is None and res == ["text", b"bytes"] and isinstance(res[0], str)
          and isinstance(res[1], bytes), "echo types: %r" % (res,))

    # 5. Unknown method, bad arity.
    err, res = c.call("no_such_method", [])
    check(err == "NoMethodError: no_such_method" and res is None, "unknown method: %r" % (err,))
    err, res = c.call("add", [1])
    check(isinstance(err, str) and err.startswith("ArgumentError") and res is None,
          "bad arity: %r" % (err,))

    # 6. A notification gets no response (a request right after it does).
    c.send([NOTIFICATION, "echo", [1]], [NOTIFICATION, "no_such_method", []])
    err, res = c.call("echo", ["after"])
    check(err is None and res == ["after"], "request after notifications: %r" % (res,))
    check(c.nothing_more(), "something arrived for a notification: %r" % list(c.unpacker))

    c.sock.close()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

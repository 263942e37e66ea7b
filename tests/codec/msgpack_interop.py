#!/usr/bin/env python3
"""MessagePack interoperability checks between netbuf and the reference Python implementation
(Debian's python3-msgpack), driven by tests/codec/message_pack_python_test.cpp.

  msgpack_interop.py check <file>  decode what netbuf's MessagePackWriter wrote and assert types,
                                   values and wire forms; exit 1 listing every failure.
  msgpack_interop.py emit <file>   write values encoded by Python for netbuf's decoder to check.

File format (both directions): a sequence of top-level MessagePack values, in pairs
<name: str> <value>, closed by the pair "end" <number of pairs before it>. The name says what the
value must be ("int:-129", "bin:256", "ts:-1:500000000", ...), so a missing or extra item, a wrong
type (bytes decoded as str, say) or a wrong value fails the check.
"""
import math
import struct
import sys

try:
    import msgpack
except ImportError:  # the C++ test reports this output
    sys.stderr.write("msgpack_interop.py: the Python msgpack module is missing "
                     "(Debian: apt-get install python3-msgpack)\n")
    sys.exit(3)


def pattern(n):
    """Bin payloads: byte i is (i * 7) & 0xff (mirrors the C++ side)."""
    return bytes((i * 7) & 0xFF for i in range(n))


def timestamp_form(sec, nsec):
    """First byte of the smallest timestamp encoding (the writer's rule)."""
    if nsec == 0 and 0 <= sec <= 0xFFFFFFFF:
        return 0xD6
    if 0 <= sec < (1 << 34):
        return 0xD7
    return 0xC7


class Checker:
    def __init__(self):
        self.failures = []

    def expect(self, name, cond, detail):
        if not cond:
            self.failures.append(f"{name}: {detail}")

    def check(self, name, value, raw):
        kind, _, arg = name.partition(":")
        e = self.expect
        if kind == "nil":
            e(name, value is None, f"got {value!r}")
        elif kind == "bool":
            want = arg == "true"
            e(name, value is want, f"got {value!r}")
        elif kind == "int":
            want = int(arg)
            e(name, type(value) is int and value == want, f"got {value!r}")
            # The smallest form, exactly as the reference packer chooses it.
            e(name, raw == msgpack.packb(want), f"raw {raw.hex()} != {msgpack.packb(want).hex()}")
        elif kind == "f32":
            want = struct.unpack(">f", struct.pack(">f", float(arg)))[0]
            e(name, raw[0] == 0xCA, f"type byte {raw[0]:#x}, want 0xca (float32)")
            e(name, type(value) is float and value == want, f"got {value!r}, want {want!r}")
        elif kind == "f64":
            want = float(arg)
            e(name, raw[0] == 0xCB, f"type byte {raw[0]:#x}, want 0xcb (float64)")
            if math.isnan(want):
                e(name, type(value) is float and math.isnan(value), f"got {value!r}")
            else:
                e(name, type(value) is float and value == want, f"got {value!r}")
        elif kind == "str":
            e(name, type(value) is str, f"got {type(value).__name__} {value!r:.60}")
            e(name, value == arg, f"got {value!r:.60}")
        elif kind == "strrep":  # strrep:<count>:<text>
            count, _, text = arg.partition(":")
            e(name, type(value) is str and value == text * int(count), f"got {value!r:.60}")
        elif kind == "bin":
            e(name, type(value) is bytes, f"got {type(value).__name__}, want bytes")
            e(name, value == pattern(int(arg)), f"got {len(value)} bytes {value[:16]!r}")
        elif kind == "ext":
            code, _, n = arg.partition(":")
            want = msgpack.ExtType(int(code), b"\xab" * int(n))
            e(name, isinstance(value, msgpack.ExtType) and value == want, f"got {value!r:.80}")
            e(name, raw == msgpack.packb(want), f"raw {raw.hex()[:40]} != reference")
        elif kind == "ts":
            sec, _, nsec = arg.partition(":")
            sec, nsec = int(sec), int(nsec)
            e(name, isinstance(value, msgpack.Timestamp), f"got {type(value).__name__}")
            e(name, value == msgpack.Timestamp(sec, nsec), f"got {value!r}")
            e(name, raw[0] == timestamp_form(sec, nsec), f"form {raw[0]:#x}")
            e(name, raw == msgpack.packb(msgpack.Timestamp(sec, nsec)), f"raw {raw.hex()}")
        elif kind == "map" and arg == "mixed":
            want = {1: "one", -1: "minus one", "s": (1, 2), b"\x00k": None, 1.5: True,
                    (1, "x"): {"inner": b"\x01"}}
            e(name, value == want, f"got {value!r}")
            e(name, list(value.keys()) == list(want.keys()), "member order changed")
            e(name, type(value.get(b"\x00k", 0)) is type(None) and b"\x00k" in value,
              "bin key not bytes")
        elif kind == "map" and arg == "canonical":
            # Keys in the order of their encodings: 01, 92.., a0, a161, a162, a26161, ff.
            want_keys = [1, (1, 2), "", "a", "b", "aa", -1]
            e(name, list(value.keys()) == want_keys, f"key order {list(value.keys())!r}")
            e(name, value["a"] == {"x": 1, "y": 2} and list(value["a"].keys()) == ["x", "y"],
              f"nested {value.get('a')!r}")
        elif kind == "array" and arg == "nested":
            want = (None, True, 300, "s", b"\x07", (), {}, ({"k": (1, -1)},))
            e(name, value == want, f"got {value!r}")
            e(name, type(value[4]) is bytes and type(value[3]) is str, "str/bin mixed up")
        else:
            e(name, False, "unknown item name (the C++ side and this script disagree)")


def check(path):
    data = open(path, "rb").read()
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=False, use_list=False,
                                max_buffer_size=len(data) + 1)
    unpacker.feed(data)
    c = Checker()
    count = 0
    seen_end = False
    while True:
        try:
            name = unpacker.unpack()
        except msgpack.OutOfData:
            break
        start = unpacker.tell()
        value = unpacker.unpack()
        raw = data[start:unpacker.tell()]
        if name == "end":
            seen_end = True
            c.expect("end", value == count, f"{count} items before end, writer said {value}")
            continue
        if type(name) is not str:
            c.expect(repr(name), False, "item name is not a str")
            continue
        count += 1
        c.check(name, value, raw)
    c.expect("end", seen_end, "no end marker")
    c.expect("count", count >= 50, f"only {count} items")
    if c.failures:
        print(f"{len(c.failures)} failure(s) in {count} items:")
        for f in c.failures:
            print("  " + f)
        return 1
    print(f"ok: {count} items")
    return 0


def emit(path):
    import datetime
    items = [("nil", None), ("bool:true", True), ("bool:false", False)]
    for v in (0, 127, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1, -1, -32, -33,
              -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63):
        items.append((f"int:{v}", v))
    for v in (0.1, -2.5, 1e300):
        items.append((f"f64:{v!r}", v))
    for s in ("", "hello", "h\u00e9llo \u20ac \U0001F600", "x" * 40):
        items.append((f"str:{s}", s))
    items.append(("strrep:70000:ab", "ab" * 70000))
    for n in (0, 3, 255, 256, 70000):
        items.append((f"bin:{n}", pattern(n)))
    for code, n in ((5, 1), (5, 3), (0, 16), (127, 300)):
        items.append((f"ext:{code}:{n}", msgpack.ExtType(code, b"\xab" * n)))
    for sec, nsec in ((0, 0), (2**32 - 1, 0), (2**32, 0), (1, 1), (2**34 - 1, 999999999),
                      (2**34, 0), (-1, 0), (-1, 500000000)):
        items.append((f"ts:{sec}:{nsec}", msgpack.Timestamp(sec, nsec)))
    items.append(("dt:1577836800:250000000",
                  datetime.datetime(2020, 1, 1, 0, 0, 0, 250000, tzinfo=datetime.timezone.utc)))
    items.append(("map:mixed", {1: "one", "s": [1, 2], b"k": None, -7: 2.5}))
    items.append(("array:nested", [None, True, 300, "s", b"\x07", [], {}, [{"k": [1, -1]}]]))
    packer = msgpack.Packer(use_bin_type=True, datetime=True)
    with open(path, "wb") as f:
        for name, value in items:
            f.write(packer.pack(name))
            f.write(packer.pack(value))
        f.write(packer.pack("end"))
        f.write(packer.pack(len(items)))
    print(f"ok: {len(items)} items")
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in ("check", "emit"):
        sys.stderr.write("usage: msgpack_interop.py check|emit <file>\n")
        return 2
    return check(argv[2]) if argv[1] == "check" else emit(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))

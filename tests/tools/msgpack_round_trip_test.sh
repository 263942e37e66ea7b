#!/usr/bin/env bash
# `netbuf msgpack decode | netbuf msgpack encode` gives back its input byte for byte, for values
# of every MessagePack type and width packed by an independent implementation (python3-msgpack,
# which writes the shortest encoding, as netbuf does): nil, bool, every int width, float32
# (use_single_float) and float64, str/bin/array/map of every width, ext of every size,
# timestamps of the 32/64/96-bit forms. Usage: msgpack_round_trip_test.sh <path to netbuf>
set -uo pipefail
netbuf="$1"
python=""
for p in "${NETBUF_PYTHON:-}" python3 /usr/bin/python3; do
  if [ -n "$p" ] && "$p" -c 'import msgpack' 2>/dev/null; then python="$p"; break; fi
done
[ -n "$python" ] || { echo "FAIL: python3 with the msgpack module not found (scripts/setup installs python3-msgpack)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One file per value.
"$python" - "$tmp" <<'PY' || { echo "FAIL: corpus"; exit 1; }
import sys, msgpack
from msgpack import ExtType, Timestamp
d = sys.argv[1]
values = [None, True, False,
          0, 127, -1, -32, 128, 255, 256, 65535, 65536, 2**32 - 1, 2**32, 2**64 - 1,
          -33, -128, -129, -32768, -32769, -2**31, -2**31 - 1, -2**63,
          1.5, -0.0, 0.1, 1e300, 5e-324,
          "", "a", "s" * 31, "s" * 32, "s" * 255, "s" * 256, "s" * 65535, "s" * 65536, "h\u00e9\"\n\U0001F600",
          b"", b"\x00\xff", b"b" * 255, b"b" * 256, b"b" * 65536,
          [], [None] * 15, [1] * 16, [True] * 65536,
          {}, {"k%02d" % i: i for i in range(15)}, {"k%02d" % i: i for i in range(16)},
          {"k%05d" % i: None for i in range(65536)},
          ExtType(5, b"x"), ExtType(0, b"xy"), ExtType(127, b"x" * 4), ExtType(1, b"x" * 8),
          ExtType(2, b"x" * 16), ExtType(5, b""), ExtType(5, b"abc"), ExtType(6, b"x" * 255),
          ExtType(7, b"x" * 256), ExtType(8, b"x" * 65536),
          Timestamp(1700000000, 0), Timestamp(2**33, 5), Timestamp(1, 999999999),
          Timestamp(-1700000000, 7), Timestamp(2**34, 0),
          {"nested": [1.5, {"b": b"\x01", "t": Timestamp(1, 0)}, ExtType(3, b"z")]}]
n = 0
for v in values:
    open("%s/%03d.mp" % (d, n), "wb").write(msgpack.packb(v, use_bin_type=True)); n += 1
# float32: the same floats packed single
for v in [1.5, -0.0, 0.1, 3.4028234663852886e38, 1.401298464324817e-45, -3.25, 16777216.0,
          [0.5, {"f": 2.5}]]:
    open("%s/%03d.mp" % (d, n), "wb").write(msgpack.packb(v, use_single_float=True)); n += 1
print(n, "values")
PY

failures=0
count=0
for f in "$tmp"/*.mp; do
  count=$((count + 1))
  "$netbuf" msgpack decode <"$f" >"$tmp/json" || { echo "FAIL: decode of $(od -An -tx1 -N16 "$f")"; failures=$((failures + 1)); continue; }
  "$netbuf" msgpack encode <"$tmp/json" >"$tmp/back" || { echo "FAIL: encode of $(head -c 200 "$tmp/json")"; failures=$((failures + 1)); continue; }
  if ! cmp -s "$f" "$tmp/back"; then
    echo "FAIL: $(od -An -tx1 -N16 "$f") came back as $(od -An -tx1 -N16 "$tmp/back") via $(head -c 200 "$tmp/json")"
    failures=$((failures + 1))
  fi
done
# The issue's example, in full: float32 1.5.
out=$(printf '\xca\x3f\xc0\x00\x00' | "$netbuf" msgpack decode)
[ "$out" = '{"$float32":1.5}' ] || { echo "FAIL: float32 1.5 decodes to [$out]"; failures=$((failures + 1)); }
hex=$(printf '%s' "$out" | "$netbuf" msgpack encode | od -An -tx1 | tr -d ' \n')
[ "$hex" = "ca3fc00000" ] || { echo "FAIL: float32 1.5 encodes back to [$hex]"; failures=$((failures + 1)); }

[ "$count" -ge 70 ] || { echo "FAIL: only $count values in the corpus"; failures=$((failures + 1)); }
if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s) in $count values" >&2
  exit 1
fi
echo "msgpack round trip: $count values byte for byte"

#!/usr/bin/env bash
# End-to-end tests of `netbuf msgpack encode|decode` and `netbuf json validate|canonical|pretty`
# (tools/data_commands.cpp): exact output bytes, round trips, python3-msgpack reading what the
# tool writes (str stays str, bin stays bytes), and the error paths (exit 1, the error's name and
# offset on stderr). Usage: data_commands_test.sh <path to the netbuf executable>
set -uo pipefail
netbuf="$1"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect_eq() {  # name expected actual
  if [ "$2" != "$3" ]; then fail "$1: expected [$2], got [$3]"; fi
}

# 1. The Perl benchmark's hash, canonical: keys sorted by their encoded bytes.
hex=$(printf '{"z":"z","a":"a","c":["2","1"]}' | "$netbuf" msgpack encode --canonical | od -An -tx1 | tr -d ' \n')
expect_eq "canonical small hash" "83a161a161a16392a132a131a17aa17a" "$hex"
# Without --canonical the insertion order stays.
hex=$(printf '{"z":"z","a":"a"}' | "$netbuf" msgpack encode | od -An -tx1 | tr -d ' \n')
expect_eq "insertion order" "82a17aa17aa161a161" "$hex"

# 2. Round trip of every type, incl. the extended-type convention.
doc='{"b":{"$bin":"AAEC"},"e":{"$ext":[5,"eA=="]},"t":{"$timestamp":[1700000000,5]},"n":-3,"f":1.5,"s":"h\u00e9llo \ud83d\ude00","u":18446744073709551615,"a":[null,true,false,{}],"z":[]}'
out=$(printf '%s' "$doc" | "$netbuf" msgpack encode | "$netbuf" msgpack decode)
expect_eq "round trip" '{"b":{"$bin":"AAEC"},"e":{"$ext":[5,"eA=="]},"t":{"$timestamp":[1700000000,5]},"n":-3,"f":1.5,"s":"héllo 😀","u":18446744073709551615,"a":[null,true,false,{}],"z":[]}' "$out"

# 3. An independent implementation reads the tool's output with the right types.
python=""
for p in "${NETBUF_PYTHON:-}" python3 /usr/bin/python3; do
  if [ -n "$p" ] && "$p" -c 'import msgpack' 2>/dev/null; then python="$p"; break; fi
done
if [ -z "$python" ]; then
  fail "python3 with the msgpack module not found (scripts/setup installs python3-msgpack)"
else
  printf '%s' "$doc" | "$netbuf" msgpack encode >"${TMPDIR:-/tmp}/netbuf_cli_$$.mp"
  "$python" - "${TMPDIR:-/tmp}/netbuf_cli_$$.mp" <<'PY' || fail "python3-msgpack check"
import sys, msgpack
data = open(sys.argv[1], "rb").read()
v = msgpack.unpackb(data, raw=False, timestamp=0)
assert v["b"] == b"\x00\x01\x02" and isinstance(v["b"], bytes), v["b"]
assert v["e"] == msgpack.ExtType(5, b"x"), v["e"]
assert v["t"] == msgpack.Timestamp(1700000000, 5), v["t"]
assert v["s"] == "h\u00e9llo \U0001F600" and isinstance(v["s"], str)
assert v["u"] == 2**64 - 1 and v["n"] == -3 and v["f"] == 1.5
assert v["a"] == [None, True, False, {}] and v["z"] == []
PY
  # The reverse: bytes packed by Python come out as $bin, str as a JSON string.
  out=$("$python" -c 'import sys,msgpack; sys.stdout.buffer.write(msgpack.packb({"k": b"\xff", "s": "x"}, use_bin_type=True))' | "$netbuf" msgpack decode)
  expect_eq "python bin -> \$bin" '{"k":{"$bin":"/w=="},"s":"x"}' "$out"
  rm -f "${TMPDIR:-/tmp}/netbuf_cli_$$.mp"
fi

# 4. A sequence of values decodes to one JSON line each.
out=$(printf '\x01\xa1x\x90' | "$netbuf" msgpack decode)
expect_eq "sequence" $'1\n"x"\n[]' "$out"

# 5. Errors: exit status 1 and the error's kind and offset on stderr.
check_error() {  # name expected-status stderr-regex command...
  local name="$1" status="$2" regex="$3"
  shift 3
  local err
  err=$("$@" 2>&1 >/dev/null)
  local rc=$?
  [ "$rc" -eq "$status" ] || fail "$name: exit status $rc, expected $status ($err)"
  [[ "$err" =~ $regex ]] || fail "$name: stderr [$err] does not match [$regex]"
}
check_error "truncated msgpack" 1 'Truncated.*at offset 0' bash -c "printf '\\x92\\x01' | '$netbuf' msgpack decode"
check_error "reserved byte" 1 'ReservedByte.*offset 1' bash -c "printf '\\x91\\xc1' | '$netbuf' msgpack decode"
check_error "invalid utf-8 str" 1 'InvalidUtf8' bash -c "printf '\\xa1\\xff' | '$netbuf' msgpack decode"
check_error "int map key" 1 'no JSON form' bash -c "printf '\\x81\\x01\\x02' | '$netbuf' msgpack decode"
check_error "bad JSON" 1 'offset 5' bash -c "printf '{\"a\":}' | '$netbuf' msgpack encode"
check_error "bad \$bin" 1 'JsonError' bash -c "printf '{\"\$bin\":\"***\"}' | '$netbuf' msgpack encode"
check_error "empty input" 1 'empty input' bash -c "printf '' | '$netbuf' msgpack decode"
check_error "unknown option" 2 'unknown option' "$netbuf" msgpack encode --nope
check_error "unknown subcommand" 2 'unknown subcommand' "$netbuf" json frobnicate

# The lenient mode keeps invalid UTF-8 flagged; JSON cannot hold it, so it is still an error.
check_error "lenient utf-8 to JSON" 1 'invalid UTF-8' bash -c "printf '\\xa1\\xff' | '$netbuf' msgpack decode --lenient-utf8"

# 6. json validate / canonical / pretty.
printf '{"a":[1,2.5,"x"]}' | "$netbuf" json validate || fail "validate of a valid document"
check_error "validate invalid" 1 'line 2, column 3' bash -c "printf '{\\n  ]' | '$netbuf' json validate"
# RFC 8785's own example (section 3.2.2): input and canonical output.
rfc_in=$(cat <<'JSON'
{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}
JSON
)
rfc_out=$(cat <<'JSON'
{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}
JSON
)
out=$(printf '%s' "$rfc_in" | "$netbuf" json canonical)
expect_eq "RFC 8785 example" "$rfc_out" "$out"
out=$(printf '{"a":[1,{"b":null}]}' | "$netbuf" json pretty)
expect_eq "pretty" $'{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ]\n}' "$out"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "data commands: all checks passed"

#!/usr/bin/env bash
# The `netbuf` command line (tools/command_line.hpp, tools/command_table.cpp): help exits 0 on
# stdout, every usage error exits 2 with a message naming the problem on stderr, for every
# subcommand in the table. Usage: cli_test.sh <path to the netbuf executable>
set -uo pipefail
netbuf="$1"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect STATUS STDOUT-REGEX STDERR-REGEX ARGS...: runs netbuf ARGS (stdin empty) and checks the
# exit status and both streams ('^$': must be empty).
expect() {
  local status="$1" out_re="$2" err_re="$3"
  shift 3
  "$netbuf" "$@" </dev/null >"$out" 2>"$err"
  local rc=$?
  [ "$rc" -eq "$status" ] || fail "netbuf $*: exit status $rc, expected $status ($(head -3 "$err"))"
  grep -Eq -- "$out_re" "$out" || { [ "$out_re" = '^$' ] && [ ! -s "$out" ]; } ||
    fail "netbuf $*: stdout does not match [$out_re]: $(head -3 "$out")"
  grep -Eq -- "$err_re" "$err" || { [ "$err_re" = '^$' ] && [ ! -s "$err" ]; } ||
    fail "netbuf $*: stderr does not match [$err_re]: $(head -3 "$err")"
  if [ "$out_re" = '^$' ] && [ -s "$out" ]; then fail "netbuf $*: stdout not empty"; fi
  if [ "$err_re" = '^$' ] && [ -s "$err" ]; then fail "netbuf $*: stderr not empty"; fi
}

# The tool's usage: help on stdout (0), no arguments on stderr (2).
for h in help --help -h; do
  expect 0 '^usage: netbuf <command> <subcommand> \[options\]$' '^$' "$h"
done
expect 2 '^$' '^usage: netbuf <command>'
expect 2 '^$' "^netbuf: unknown command 'frobnicate'$" frobnicate
expect 2 '^$' "^netbuf: unknown command 'frobnicate'$" help frobnicate

# Every subcommand listed by `netbuf help`: its help, and each kind of usage error.
subcommands=$("$netbuf" help | sed -n 's/^    \([a-z]*\) \([a-z]*\)  .*/\1 \2/p')
count=$(printf '%s\n' "$subcommands" | wc -l)
[ "$count" -ge 12 ] || fail "netbuf help lists $count subcommands, expected at least 12"
commands=$(printf '%s\n' "$subcommands" | cut -d' ' -f1 | sort -u)
for c in $commands; do
  expect 0 "^usage: netbuf $c <subcommand> \[options\]$" '^$' "$c" --help
  expect 0 "^usage: netbuf $c <subcommand> \[options\]$" '^$' help "$c"
  expect 2 '^$' "^netbuf $c: missing subcommand \(available: " "$c"
  expect 2 '^$' "^netbuf $c: unknown subcommand 'nope' \(available: " "$c" nope
done
while read -r c s; do
  expect 0 "^usage: netbuf $c $s( |$)" '^$' "$c" "$s" --help
  expect 0 "^usage: netbuf $c $s( |$)" '^$' "$c" "$s" -h
  expect 0 "^usage: netbuf $c $s( |$)" '^$' help "$c" "$s"
  expect 2 '^$' "^netbuf $c $s: unknown option '--no-such-option'$" "$c" "$s" --no-such-option
  # the usage follows the message
  grep -q "^usage: netbuf $c $s" "$err" || fail "netbuf $c $s --no-such-option: no usage on stderr"
done <<<"$subcommands"

# Options that need a value, required options, invalid values.
expect 2 '^$' '^netbuf bench strings: option --seconds needs a value \(--seconds S\)$' bench strings --seconds
expect 2 '^$' "^netbuf bench strings: invalid value '0' for --seconds \(seconds in \(0, 3600\]\)$" bench strings --seconds 0
expect 2 '^$' "^netbuf bench echo: invalid value 'fast' for --impl \(one of both, all, netbuf, netbuf-io_uring, asio\)$" bench echo --impl fast
expect 2 '^$' "^netbuf bench accept: invalid value '0' for --loops \(a count in 1..256\)$" bench accept --loops 0
expect 2 '^$' '^netbuf load echo: --port is required$' load echo
expect 2 '^$' "^netbuf load echo: invalid value '0' for --port \(a port in 1..65535\)$" load echo --port 0
expect 2 '^$' '^netbuf load echo: .*8' load echo --port 1 --size 4
expect 2 '^$' "^netbuf load echo: invalid value '4x' for --size" load echo --port 1 --size 4x
expect 2 '^$' '^netbuf load rpc: --port is required$' load rpc
expect 2 '^$' "^netbuf load rpc: invalid value 'mul' for --method" load rpc --port 1 --method mul
expect 2 '^$' "^netbuf serve echo: invalid value '0' for --threads \(a count in 1..1024\)$" serve echo --threads 0
expect 2 '^$' "^netbuf serve echo: invalid value 'nginx' for --impl \(one of netbuf, asio\)$" serve echo --impl nginx
expect 2 '^$' '^netbuf serve echo: --unix and --udp exclude each other$' serve echo --udp --unix /tmp/x
expect 2 '^$' '^netbuf serve echo: --unix and --udp are served by --impl netbuf only$' serve echo --udp --impl asio
expect 2 '^$' "^netbuf serve rpc: invalid value '70000' for --port \(a port in 0..65535\)$" serve rpc --port 70000
# --transport: a name that is none is a usage error naming those that are (before anything starts).
for s in echo rpc http redis; do
  expect 2 '^$' "^netbuf serve $s: invalid value 'epoll' for --transport \(asio, io_uring or auto\)$" serve "$s" --transport epoll
done
expect 2 '^$' '^netbuf serve echo: --transport chooses the transport of --impl netbuf only$' serve echo --impl asio --transport asio
# NETBUF_TRANSPORT (the default) naming no transport: the command fails (1) on one line. (A server
# that started anyway would run until a signal: the timeout ends it.)
NETBUF_TRANSPORT=epoll timeout 10 "$netbuf" serve rpc --port 0 </dev/null >"$out" 2>"$err"
rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -Eq '^netbuf serve rpc: .*(epoll|NETBUF_TRANSPORT)' "$err" ||
  fail "NETBUF_TRANSPORT=epoll netbuf serve rpc: exit status $rc, stderr: $(head -3 "$err")"
expect 2 '^$' "^netbuf json pretty: unknown option '--indent'$" json pretty --indent
# TLS options that do not go together (checked before any file is read).
expect 2 '^$' '^netbuf serve echo: --tls-cert and --tls-key are given together$' serve echo --tls-cert /nonexistent
expect 2 '^$' '^netbuf serve http: --tls-cert and --tls-key are given together$' serve http --tls-key /nonexistent
expect 2 '^$' '^netbuf serve redis: --tls-client-ca needs --tls-cert and --tls-key$' serve redis --tls-client-ca /nonexistent
expect 2 '^$' '^netbuf serve echo: TLS is served over TCP and Unix domain sockets by --impl netbuf only$' serve echo --udp --tls-cert /a --tls-key /b
expect 2 '^$' '^netbuf serve echo: TLS is served over TCP and Unix domain sockets by --impl netbuf only$' serve echo --impl asio --tls-cert /a --tls-key /b
expect 2 '^$' '^netbuf load echo: --cacert and --insecure go with --tls$' load echo --port 1 --insecure
expect 2 '^$' '^netbuf load echo: --cacert and --insecure exclude each other$' load echo --port 1 --tls --insecure --cacert /a
expect 2 '^$' '^netbuf http get: --cacert and --insecure exclude each other$' http get https://localhost/ --insecure --cacert /a
# A certificate that does not load: the command fails (1) naming the file.
expect 1 '^$' '^netbuf serve http: .*/nonexistent' serve http --tls-cert /nonexistent --tls-key /nonexistent

# The help texts carry no history: no issue numbers, no dated or third-party figures.
all_help=$("$netbuf" help; while read -r c s; do "$netbuf" "$c" "$s" --help; done <<<"$subcommands")
if grep -Eiq 'issue [0-9]|#[0-9]+|for reference|published' <<<"$all_help"; then
  fail "help text narrates history: $(grep -Ei 'issue [0-9]|#[0-9]+|for reference|published' <<<"$all_help")"
fi

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "cli: all checks passed ($count subcommands)"

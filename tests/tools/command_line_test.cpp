// Tests of tools/command_line.hpp: the option parser and dispatch of the `netbuf` tool, against a
// table defined here (the tool's own table is tested end to end by cli_test.sh).
#include "command_line.hpp"
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>
#include <stdio.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "support/command_line_run.hpp"

using namespace netbuf::tools;

namespace {

constexpr OptionSpec kRunOptions[] = {
    {"--port", "P", "server port", {}, true},  {"--seconds", "S", "seconds", "1.5"},
    {"--size", "N", "bytes", "16K"},           {"--count", "C", "a count", "3"},
    {"--mode", "M", "fast or slow", "fast"},   {"--json", "", "machine-readable\noutput"},
    {"--name", "X", "a name without default"},
};

// What the last handler call saw.
struct Seen {
  int calls = 0;
  std::uint16_t port = 0;
  double seconds = 0;
  std::size_t size = 0, count = 0, mode = 0;
  bool json = false, hasName = false;
  std::string name;
};
Seen seen;

int runHandler(const ParsedOptions& o) {
  ++seen.calls;
  seen.port = o.port("--port", true);
  seen.seconds = o.seconds("--seconds", 100, true);
  seen.size = o.bytes("--size", 8);
  seen.count = o.count("--count", 1, 10);
  constexpr std::string_view kModes[] = {"fast", "slow"};
  seen.mode = o.choice("--mode", kModes);
  seen.json = o.flag("--json");
  seen.hasName = o.value("--name").has_value();
  if (seen.hasName) seen.name = o.text("--name");
  return seen.count == 7 ? kExitFailure : kExitOk;
}

int throwingHandler(const ParsedOptions&) { throw std::runtime_error("disk on fire"); }

constexpr Subcommand kTestSubs[] = {
    {"run", "runs things", "Runs\nthings.", kRunOptions, runHandler},
    {"fail", "always fails", {}, {}, throwingHandler},
};
constexpr Command kTable[] = {{"test", "test commands", kTestSubs}};

using Run = netbuf::test::CommandLineRun;

Run run(std::vector<std::string_view> args) {
  return netbuf::test::runCommands(kTable, std::move(args));
}

bool contains(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("runCommandLine: a subcommand runs with its options parsed; defaults from the table") {
  seen = {};
  Run r = run({"test", "run", "--port", "80"});
  CHECK(r.rc == kExitOk);
  CHECK(r.err.empty());
  CHECK(seen.calls == 1);
  CHECK(seen.port == 80);
  CHECK(seen.seconds == 1.5);
  CHECK(seen.size == 16384);
  CHECK(seen.count == 3);
  CHECK(seen.mode == 0);
  CHECK_FALSE(seen.json);
  CHECK_FALSE(seen.hasName);

  r = run({"test", "run", "--json", "--port", "1", "--seconds", "0.25", "--size", "2M", "--mode",
           "slow", "--count", "4", "--count", "5", "--name", "-x"});
  CHECK(r.rc == kExitOk);
  CHECK(seen.port == 1);
  CHECK(seen.seconds == 0.25);
  CHECK(seen.size == 2u << 20);
  CHECK(seen.count == 5);  // the last one counts
  CHECK(seen.mode == 1);
  CHECK(seen.json);
  CHECK(seen.name == "-x");  // a value may start with '-'

  // The handler's exit code comes through; an exception it throws is a failure (1).
  CHECK(run({"test", "run", "--port", "1", "--count", "7"}).rc == kExitFailure);
  r = run({"test", "fail"});
  CHECK(r.rc == kExitFailure);
  CHECK(contains(r.err, "netbuf test fail: disk on fire"));
}

TEST_CASE("runCommandLine: usage errors exit 2 with a message naming the problem, then usage") {
  seen = {};
  struct Case {
    std::vector<std::string_view> args;
    std::string_view message;
  };
  const Case cases[] = {
      {{}, "usage: netbuf <command>"},
      {{"nope"}, "netbuf: unknown command 'nope'"},
      {{"test"}, "netbuf test: missing subcommand (available: run, fail)"},
      {{"test", "walk"}, "netbuf test: unknown subcommand 'walk' (available: run, fail)"},
      {{"test", "run", "--port", "1", "--bogus"}, "netbuf test run: unknown option '--bogus'"},
      {{"test", "run", "--port"}, "option --port needs a value (--port P)"},
      {{"test", "run"}, "netbuf test run: --port is required"},
      {{"test", "run", "--port", "0"}, "invalid value '0' for --port (a port in 1..65535)"},
      {{"test", "run", "--port", "65536"}, "invalid value '65536' for --port"},
      {{"test", "run", "--port", "1", "--seconds", "0"}, "invalid value '0' for --seconds"},
      {{"test", "run", "--port", "1", "--seconds", "101"}, "for --seconds (seconds in (0, 100])"},
      {{"test", "run", "--port", "1", "--seconds", "nan"}, "invalid value 'nan' for --seconds"},
      {{"test", "run", "--port", "1", "--size", "4"}, "invalid value '4' for --size"},
      {{"test", "run", "--port", "1", "--size", "1Q"}, "invalid value '1Q' for --size"},
      {{"test", "run", "--port", "1", "--count", "11"}, "(a count in 1..10)"},
      {{"test", "run", "--port", "1", "--count", "-1"}, "invalid value '-1' for --count"},
      {{"test", "run", "--port", "1", "--mode", "medium"}, "(one of fast, slow)"},
      {{"help", "nope"}, "netbuf: unknown command 'nope'"},
      {{"help", "test", "walk"}, "unknown subcommand 'walk'"},
      {{"help", "test", "run", "extra"}, "netbuf help: unexpected argument 'extra'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.message);
    const Run r = run(c.args);
    CHECK(r.rc == kExitUsage);
    CHECK(r.out.empty());
    CHECK(contains(r.err, c.message));
    CHECK(contains(r.err, "usage: netbuf"));
  }
}

TEST_CASE("runCommandLine: help texts on stdout, exit 0; generated from the table") {
  seen = {};
  for (const std::vector<std::string_view>& args :
       {std::vector<std::string_view>{"help"}, {"--help"}, {"-h"}}) {
    const Run r = run(args);
    CHECK(r.rc == kExitOk);
    CHECK(r.err.empty());
    CHECK(contains(r.out, "usage: netbuf <command> <subcommand> [options]"));
    CHECK(contains(r.out, "test: test commands"));
    CHECK(contains(r.out, "test run   runs things"));
    CHECK(contains(r.out, "test fail  always fails"));
  }
  for (const std::vector<std::string_view>& args :
       {std::vector<std::string_view>{"test", "--help"}, {"help", "test"}}) {
    const Run r = run(args);
    CHECK(r.rc == kExitOk);
    CHECK(contains(r.out, "usage: netbuf test <subcommand> [options]"));
    CHECK(contains(r.out, "  run   runs things\n"));
  }
  for (const std::vector<std::string_view>& args :
       {std::vector<std::string_view>{"test", "run", "--help"},
        {"test", "run", "--port", "1", "-h", "--bogus"},
        {"help", "test", "run"}}) {
    const Run r = run(args);
    CHECK(r.rc == kExitOk);
    CHECK(r.err.empty());
    CHECK(contains(r.out, "usage: netbuf test run --port P [--seconds S] [--size N]"));
    CHECK(contains(r.out, "runs things\n\nRuns\nthings.\n\noptions:\n"));
    CHECK(contains(r.out, "  --port P     server port (required)\n"));
    CHECK(contains(r.out, "  --seconds S  seconds (default 1.5)\n"));
    CHECK(contains(r.out, "  --json       machine-readable\n               output\n"));
  }
  CHECK(seen.calls == 0);
}

TEST_CASE("ParsedOptions: given, value, defaults; a name outside the table is a logic_error") {
  const std::string_view args[] = {"--port", "9", "--json"};
  const ParsedOptions o(kTestSubs[0], args);
  CHECK_FALSE(o.helpRequested());
  CHECK(&o.subcommand() == &kTestSubs[0]);
  CHECK(o.given("--port"));
  CHECK(o.given("--json"));
  CHECK_FALSE(o.given("--seconds"));
  CHECK(o.value("--seconds") == std::optional<std::string_view>("1.5"));
  CHECK(o.value("--port") == std::optional<std::string_view>("9"));
  CHECK_FALSE(o.value("--name").has_value());
  CHECK_THROWS_AS(o.text("--name"), UsageError);
  CHECK_THROWS_AS(o.given("--colour"), std::logic_error);
  CHECK_THROWS_WITH_AS(o.invalid("--port", "why"), "invalid value '9' for --port (why)",
                       UsageError);
}

TEST_CASE("parseCount, parseBytes, parseSeconds: whole strings only, in range") {
  std::size_t n = 42;
  CHECK(parseCount("0", n));
  CHECK(n == 0);
  CHECK(parseCount("18446744073709551615", n));
  CHECK(n == SIZE_MAX);
  n = 42;
  for (std::string_view bad : {"", "-1", "+1", " 1", "1 ", "1x", "18446744073709551616"}) {
    CHECK_FALSE(parseCount(bad, n));
    CHECK(n == 42);
  }
  CHECK(parseBytes("16K", n));
  CHECK(n == 16384);
  CHECK(parseBytes("3KiB", n));
  CHECK(n == 3072);
  CHECK(parseBytes("2k", n));
  CHECK(n == 2048);
  CHECK(parseBytes("1M", n));
  CHECK(n == 1u << 20);
  CHECK(parseBytes("5Mi", n));
  CHECK(n == 5u << 20);
  CHECK(parseBytes("100", n));
  CHECK(n == 100);
  for (std::string_view bad : {"K", "1G", "1KK", "18446744073709551615K"}) {
    CHECK_FALSE(parseBytes(bad, n));
    CHECK(n == 100);
  }
  double s = 7;
  CHECK(parseSeconds("0", s));
  CHECK(s == 0);
  CHECK(parseSeconds("0.5", s));
  CHECK(s == 0.5);
  CHECK(parseSeconds("86400", s));
  for (std::string_view bad : {"", "-1", "86401", "nan", "1s", "inf"}) {
    CHECK_FALSE(parseSeconds(bad, s));
    CHECK(s == 86400);
  }
}

// Tests of tools/transport_options.hpp: the `netbuf` servers' --transport option, parsed through
// runCommandLine against a table defined here (the tool's own table: cli_test.sh, end to end).
#include "transport_options.hpp"
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>
#include <stdio.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/command_line_run.hpp"

using namespace netbuf;
using namespace netbuf::tools;

namespace {

constexpr OptionSpec kServeOptions[] = {
    {"--transport", "T", "asio, io_uring or auto"},
};

std::optional<Transport> seen;

int serveHandler(const ParsedOptions& o) {
  seen = serverTransport(o);
  return kExitOk;
}

// What a server's EventLoopGroup throws where the system refuses io_uring.
int unavailableHandler(const ParsedOptions& o) {
  seen = serverTransport(o);
  throw TransportUnavailableError("io_uring transport unavailable: io_uring_setup: not permitted");
}

constexpr Subcommand kSubs[] = {
    {"echo", "serves", {}, kServeOptions, serveHandler},
    {"refused", "cannot serve", {}, kServeOptions, unavailableHandler},
};
constexpr Command kTable[] = {{"serve", "servers", kSubs}};

using Run = netbuf::test::CommandLineRun;

Run run(std::vector<std::string_view> args) {
  seen.reset();
  return netbuf::test::runCommands(kTable, std::move(args));
}

}  // namespace

TEST_CASE("serverTransport: absent is Default (NETBUF_TRANSPORT, else asio); names as parsed") {
  Run r = run({"serve", "echo"});
  CHECK(r.rc == kExitOk);
  CHECK(seen == Transport::Default);

  const std::pair<std::string_view, Transport> names[] = {
      {"asio", Transport::Asio},       {"io_uring", Transport::IoUring},
      {"iouring", Transport::IoUring}, {"io-uring", Transport::IoUring},
      {"auto", Transport::Auto},       {"default", Transport::Default},
  };
  for (const auto& entry : names) {  // no structured binding: clang 14 cannot capture one
    const std::string_view name = entry.first;
    CAPTURE(name);
    r = run({"serve", "echo", "--transport", name});
    CHECK(r.rc == kExitOk);
    CHECK(r.err.empty());
    CHECK(seen == entry.second);
  }
}

TEST_CASE("serverTransport: any other name is a usage error (2) naming the valid ones") {
  for (std::string_view bad : {"epoll", "", "ASIO ", "uring"}) {
    CAPTURE(bad);
    const Run r = run({"serve", "echo", "--transport", bad});
    CHECK(r.rc == kExitUsage);
    CHECK_FALSE(seen.has_value());
    CHECK(r.err.starts_with("netbuf serve echo: invalid value '" + std::string(bad) +
                            "' for --transport (asio, io_uring or auto)\n"));
  }
  const Run r = run({"serve", "echo", "--transport"});
  CHECK(r.rc == kExitUsage);
  CHECK(r.err.starts_with("netbuf serve echo: option --transport needs a value"));
}

TEST_CASE("TransportUnavailableError from a server: exit 1, one line naming the command") {
  const Run r = run({"serve", "refused", "--transport", "io_uring"});
  CHECK(seen == Transport::IoUring);
  CHECK(r.rc == kExitFailure);
  CHECK(r.out.empty());
  CHECK(r.err ==
        "netbuf serve refused: io_uring transport unavailable: io_uring_setup: not permitted\n");
}

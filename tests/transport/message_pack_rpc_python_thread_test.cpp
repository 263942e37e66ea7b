// Interop: the demo RPC service (tools/rpc_service.hpp, what `netbuf serve rpc` runs) served
// in-process by MessagePackRpcServer on 127.0.0.1:0, driven by an independent client written with
// python3-msgpack (msgpack_rpc_client.py beside this file): single call, pipelining, out-of-order
// completion, bin vs str, unknown method, bad arity, notifications. The script's exit status
// decides; its output is printed on failure. A missing python3 or msgpack module FAILS the test
// (with the install hint), it is never skipped. Run under ThreadSanitizer too ("threaded").
#include <netbuf/transport/message_pack_rpc_server.hpp>

#include <doctest/doctest.h>

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <netbuf/transport/event_loop.hpp>
#include <string>
#include <vector>

#include "rpc_service.hpp"

using namespace netbuf;

namespace {

struct Output {
  int status = -1;
  std::string text;
};

/// Runs a shell command; its stdout and stderr together, and its exit status.
Output run(const std::string& command) {
  Output out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.text.append(buf.data(), n);
  const int st = ::pclose(p);
  out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

/// The first interpreter that can import msgpack: $NETBUF_PYTHON, python3 on PATH, then
/// /usr/bin/python3 (Debian's python3-msgpack installs there, and a PATH python3 from pyenv or a
/// venv may not see it). Empty when none can; `tried` says what was tried and why it failed.
std::string findPython(std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NETBUF_PYTHON"); env != nullptr && *env != '\0')
    candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const std::string& py : candidates) {
    const Output o = run("'" + py + "' -c 'import msgpack'");
    if (o.status == 0) return py;
    tried += "  " + py + ": exit " + std::to_string(o.status) + ": " + o.text + "\n";
  }
  return {};
}

}  // namespace

TEST_CASE("python3-msgpack client against MessagePackRpcServer with the demo service") {
  const std::filesystem::path script =
      std::filesystem::path(__FILE__).parent_path() / "msgpack_rpc_client.py";
  REQUIRE_MESSAGE(std::filesystem::exists(script), "missing " << script.string());
  std::string tried;
  const std::string python = findPython(tried);
  REQUIRE_MESSAGE(!python.empty(),
                  "no python3 with the msgpack module (install python3-msgpack, e.g. apt-get "
                  "install python3-msgpack, or set NETBUF_PYTHON); tried:\n"
                      << tried);

  EventLoopGroup group(2);
  MessagePackRpcServer rpc;
  tools::registerDemoMethods(rpc, std::make_shared<tools::RpcDemoStore>());
  auto server = rpc.bind(group, "127.0.0.1", 0);

  const Output o =
      run("'" + python + "' '" + script.string() + "' " + std::to_string(server->port()));
  INFO("python output:\n" << o.text);
  CHECK(o.status == 0);
  CHECK(o.text.find("all checks passed") != std::string::npos);

  const RpcServerStats s = rpc.stats();
  CHECK(s.notifications == 2);
  CHECK(s.unknownNotifications == 1);
  CHECK(s.unknownMethods == 1);
  CHECK(s.protocolErrors == 0);

  server->close();
  server->closeChildren();
  group.shutdownGracefully(std::chrono::milliseconds(0), std::chrono::seconds(5));
}

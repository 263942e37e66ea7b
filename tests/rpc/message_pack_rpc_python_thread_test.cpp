// Interop: the demo RPC service (tools/rpc_service.hpp, what `netbuf serve rpc` runs) served
// in-process by MessagePackRpcServer on 127.0.0.1:0, driven by an independent client written with
// python3-msgpack (msgpack_rpc_client.py beside this file): single call, pipelining, out-of-order
// completion, bin vs str, unknown method, bad arity, notifications. The script's exit status
// decides; its output is printed on failure. A missing python3 or msgpack module FAILS the test
// (with the install hint), it is never skipped. Run under ThreadSanitizer too ("threaded").
#include <netbuf/rpc/message_pack_rpc_server.hpp>

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
#include "support/python_runner.hpp"

using namespace netbuf;

TEST_CASE("python3-msgpack client against MessagePackRpcServer with the demo service") {
  const std::filesystem::path script =
      std::filesystem::path(__FILE__).parent_path() / "msgpack_rpc_client.py";
  const std::string python = test::requirePython("msgpack", "apt-get install python3-msgpack");

  EventLoopGroup group(2);
  MessagePackRpcServer rpc;
  tools::registerDemoMethods(rpc, std::make_shared<tools::RpcDemoStore>());
  auto server = rpc.bind(group, "127.0.0.1", 0);

  const test::Output o =
      test::run(test::pythonCommand(python, script, {std::to_string(server->port())}));
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

#pragma once
// Subcommands of the `netbuf` tool. Each takes the arguments after its name and returns an exit
// code; errors it cannot report itself are thrown as std::exception and reported by main.

#include <string_view>
#include <vector>

namespace netbuf::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// `netbuf bench <suite>`; suites: strings, echo.
int runBench(const std::vector<std::string_view>& args);

/// `netbuf serve <server>`; servers: echo (tools/echo_command.cpp).
int runServe(const std::vector<std::string_view>& args);

/// `netbuf load <load>`; loads: echo (tools/echo_command.cpp).
int runLoad(const std::vector<std::string_view>& args);

/// `netbuf serve rpc` / `netbuf load rpc`: the arguments after "rpc" (tools/rpc_command.cpp).
int runServeRpc(const std::vector<std::string_view>& args);
int runLoadRpc(const std::vector<std::string_view>& args);

/// `netbuf msgpack encode|decode` (tools/data_commands.cpp).
int runMsgpack(const std::vector<std::string_view>& args);
/// `netbuf json validate|canonical|pretty` (tools/data_commands.cpp).
int runJson(const std::vector<std::string_view>& args);

/// `netbuf bench echo`: the arguments after "echo" (tools/echo_command.cpp).
int runBenchEcho(const std::vector<std::string_view>& args);
/// `netbuf bench accept`: connections accepted per second, single acceptor vs one per loop.
int runBenchAccept(const std::vector<std::string_view>& args);

}  // namespace netbuf::tools

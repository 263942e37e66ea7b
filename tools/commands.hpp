#pragma once
// The `netbuf` tool's subcommand handlers (one file per command family) and the table that names
// them (command_table.cpp). Each handler runs with its options parsed (command_line.hpp) and
// returns an exit code; invalid values are UsageErrors, other failures std::exceptions (both
// reported by runCommandLine).

#include <span>

#include "command_line.hpp"

namespace netbuf::tools {

/// Every command of the tool, with its subcommands, usage texts and handlers.
std::span<const Command> commandTable();

// bench_command.cpp, echo_command.cpp, accept_bench.cpp
int runBenchStrings(const ParsedOptions& options);
int runBenchEcho(const ParsedOptions& options);
int runBenchAccept(const ParsedOptions& options);

// echo_command.cpp
int runServeEcho(const ParsedOptions& options);
int runLoadEcho(const ParsedOptions& options);

// rpc_command.cpp
int runServeRpc(const ParsedOptions& options);
int runLoadRpc(const ParsedOptions& options);

// http_command.cpp
int runServeHttp(const ParsedOptions& options);
int runBenchHttp(const ParsedOptions& options);
int runHttpGet(const ParsedOptions& options);
int runHttpPost(const ParsedOptions& options);

// redis_command.cpp
int runServeRedis(const ParsedOptions& options);

// data_commands.cpp
int runMsgpackEncode(const ParsedOptions& options);
int runMsgpackDecode(const ParsedOptions& options);
int runJsonValidate(const ParsedOptions& options);
int runJsonCanonical(const ParsedOptions& options);
int runJsonPretty(const ParsedOptions& options);

}  // namespace netbuf::tools

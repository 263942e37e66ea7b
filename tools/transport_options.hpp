#pragma once
// The `netbuf` tool's --transport option, shared by its servers (`serve echo`, `serve rpc`,
// `serve http`, `serve redis`): which transport their EventLoopGroup runs (asio, io_uring or
// auto; netbuf/transport/transport.hpp), and the line that says which one it got.

#include <netbuf/transport/transport.hpp>

#include "command_line.hpp"

namespace netbuf::tools {

/// --transport asio|io_uring|auto (parseTransport's spellings; "default" too); absent:
/// Transport::Default (NETBUF_TRANSPORT, else asio). UsageError naming the valid values otherwise.
Transport serverTransport(const ParsedOptions& options);

/// Prints "transport: NAME" (the transport the server's loops run, after Default and Auto were
/// resolved) on stdout and flushes; note, when given, follows in parentheses. Called right after
/// printListening(): that line stays first and unchanged, since scripts read the port from it.
void printTransport(Transport transport, const char* note = nullptr);

}  // namespace netbuf::tools

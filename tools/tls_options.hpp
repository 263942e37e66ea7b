#pragma once
// The `netbuf` tool's TLS options, shared by its commands: a server's (--tls-cert, --tls-key,
// --tls-client-ca: `serve echo`, `serve http`, `serve redis`) and a client's (--cacert,
// --insecure: `http get`, `http post`, `load echo --tls`), turned into SslContexts.

#include <memory>
#include <string>
#include <vector>

#include "command_line.hpp"

namespace netbuf {
class SslContext;
}  // namespace netbuf

namespace netbuf::tools {

/// The server context of --tls-cert FILE --tls-key FILE [--tls-client-ca FILE] (the client CA:
/// client certificates are required and must chain to it), offering alpn; nullptr without
/// --tls-cert. UsageError when the options do not go together; SslError when a file does not
/// load (the command fails naming it).
std::shared_ptr<SslContext> serverTlsContext(const ParsedOptions& options,
                                             std::vector<std::string> alpn = {});

/// The client context of --cacert FILE (the roots trusted instead of the system's) or --insecure
/// (no verification at all: a warning goes to stderr); with neither, the system's roots.
std::shared_ptr<SslContext> clientTlsContext(const ParsedOptions& options);

}  // namespace netbuf::tools

#pragma once
// nginx as a test peer: the configuration around a test's own `server` blocks. One process in the
// foreground (the test's PeerProcess ends it with a signal), every path nginx writes under the
// prefix (the package's defaults under /var are not the test's), errors on stderr (the peer's
// log). `user root` matters only when the test runs as root: nginx would otherwise drop to nobody,
// who may not read the test's files.

#include <string>

namespace netbuf::test {

/// nginx.conf for prefix directory `prefix`, with `http` (server blocks, types...) inside http {}.
inline std::string nginxConfig(const std::string& prefix, const std::string& http) {
  const std::string& p = prefix;
  return R"(
daemon off;
master_process off;
worker_processes 1;
user root;
error_log stderr warn;
pid )" + p +
         R"(/nginx.pid;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path )" +
         p + R"(/body;
  proxy_temp_path )" +
         p + R"(/proxy;
  fastcgi_temp_path )" +
         p + R"(/fastcgi;
  uwsgi_temp_path )" +
         p + R"(/uwsgi;
  scgi_temp_path )" +
         p + R"(/scgi;
  default_type application/octet-stream;
)" + http +
         R"(
}
)";
}

}  // namespace netbuf::test

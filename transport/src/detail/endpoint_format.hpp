#pragma once
// Conversions between Asio's generic endpoints (what the protocol-independent sockets of
// SocketChannel and ServerChannel report) and TCP / Unix domain endpoints, and their text form.

#include <sys/socket.h>
#include <sys/un.h>

#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <cstring>
#include <sstream>
#include <string>

namespace netbuf::detail {

template <class Endpoint>
bool isDomain(const Endpoint& ep) noexcept {
  return ep.data()->sa_family == AF_UNIX;
}

/// The TCP endpoint of an IPv4/IPv6 generic endpoint; a default endpoint otherwise.
template <class Endpoint>
boost::asio::ip::tcp::endpoint toTcp(const Endpoint& ep) {
  boost::asio::ip::tcp::endpoint out;
  const int family = ep.data()->sa_family;
  if ((family == AF_INET || family == AF_INET6) && ep.size() <= out.capacity()) {
    std::memcpy(out.data(), ep.data(), ep.size());
    out.resize(ep.size());
  }
  return out;
}

/// "127.0.0.1:80", "[::1]:80"; for a Unix socket its path, "@name" for an abstract name, or
/// "(unnamed)" for an unbound end.
template <class Endpoint>
std::string formatEndpoint(const Endpoint& ep) {
  const int family = ep.data()->sa_family;
  if (family == AF_INET || family == AF_INET6) {
    std::ostringstream s;
    s << toTcp(ep);
    return s.str();
  }
  if (family == AF_UNIX) {
    const auto* un = reinterpret_cast<const sockaddr_un*>(ep.data());
    const std::size_t header = offsetof(sockaddr_un, sun_path);
    const std::size_t n = ep.size() > header ? ep.size() - header : 0;
    if (n == 0) return "(unnamed)";
    if (un->sun_path[0] == '\0') {
      // Appended, not "@" + string: g++ 12's -Wrestrict misfires on that when inlined.
      std::string name(1, '@');
      name.append(un->sun_path + 1, n - 1);
      return name;
    }
    return std::string(un->sun_path, strnlen(un->sun_path, n));
  }
  return "?";
}

}  // namespace netbuf::detail

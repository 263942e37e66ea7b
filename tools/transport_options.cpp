// transport_options.hpp: the tool's --transport option.
#include "transport_options.hpp"
// (first include: proves the header is self-contained)

#include <cstdio>
#include <string_view>

namespace netbuf::tools {

Transport serverTransport(const ParsedOptions& options) {
  if (!options.given("--transport")) return Transport::Default;
  const std::optional<Transport> t = parseTransport(options.text("--transport"));
  if (!t) options.invalid("--transport", "asio, io_uring or auto");
  return *t;
}

void printTransport(Transport transport, const char* note) {
  const std::string_view name = transportName(transport);
  if (note != nullptr) {
    std::printf("transport: %.*s (%s)\n", static_cast<int>(name.size()), name.data(), note);
  } else {
    std::printf("transport: %.*s\n", static_cast<int>(name.size()), name.data());
  }
  std::fflush(stdout);
}

}  // namespace netbuf::tools

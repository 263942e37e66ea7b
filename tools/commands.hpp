#pragma once
// Subcommands of the `netbuf` tool. Each takes the arguments after its name and returns an exit
// code; errors it cannot report itself are thrown as std::exception and reported by main.

#include <string_view>
#include <vector>

namespace netbuf::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// `netbuf bench <suite>`; suites: strings.
int runBench(const std::vector<std::string_view>& args);

}  // namespace netbuf::tools

// `netbuf`: the project's command-line tool. Subcommands register in one table so the tool can
// grow (serve, load, msgpack, json) without touching the dispatcher.
//
// Exit codes: 0 success, 1 the command ran and failed, 2 usage error (unknown command/option).

#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"

namespace {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(const std::vector<std::string_view>& args);
};

constexpr Command kCommands[] = {
    {"bench", "run built-in benchmarks (bench strings, bench echo)", netbuf::tools::runBench},
    {"serve", "run a server until SIGINT/SIGTERM (serve echo, serve rpc)", netbuf::tools::runServe},
    {"load", "drive a server with load and report latency (load echo, load rpc)",
     netbuf::tools::runLoad},
    {"msgpack", "MessagePack <-> JSON on stdin/stdout (msgpack encode, msgpack decode)",
     netbuf::tools::runMsgpack},
    {"json", "check and reformat JSON on stdin (json validate, canonical, pretty)",
     netbuf::tools::runJson},
};

/// Subcommands that live outside their command's own file: `<command> <name> ...` runs them with
/// the arguments after <name>.
struct SubCommand {
  std::string_view command;
  std::string_view name;
  int (*run)(const std::vector<std::string_view>& args);
};

constexpr SubCommand kSubCommands[] = {
    {"serve", "rpc", netbuf::tools::runServeRpc},
    {"load", "rpc", netbuf::tools::runLoadRpc},
};

void printUsage(std::FILE* out) {
  std::fprintf(out, "usage: netbuf <command> [options]\n\ncommands:\n");
  for (const Command& c : kCommands)
    std::fprintf(out, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  std::fprintf(out, "\nrun 'netbuf <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) {
    printUsage(stderr);
    return netbuf::tools::kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    printUsage(stdout);
    return netbuf::tools::kExitOk;
  }
  for (const Command& c : kCommands) {
    if (c.name == args[0]) {
      try {
        for (const SubCommand& sub : kSubCommands) {
          if (sub.command == c.name && args.size() > 1 && sub.name == args[1])
            return sub.run(std::vector<std::string_view>(args.begin() + 2, args.end()));
        }
        return c.run(std::vector<std::string_view>(args.begin() + 1, args.end()));
      } catch (const std::exception& e) {
        std::fprintf(stderr, "netbuf %.*s: %s\n", static_cast<int>(c.name.size()), c.name.data(),
                     e.what());
        return netbuf::tools::kExitFailure;
      }
    }
  }
  std::fprintf(stderr, "netbuf: unknown command '%.*s'\n\n", static_cast<int>(args[0].size()),
               args[0].data());
  printUsage(stderr);
  return netbuf::tools::kExitUsage;
}

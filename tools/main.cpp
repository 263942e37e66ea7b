// `netbuf`: the project's command-line tool. The commands, their options and usage texts are one
// table (command_table.cpp); command_line.hpp parses against it and documents the exit codes.

#include <cstdio>
#include <string_view>
#include <vector>

#include "commands.hpp"

int main(int argc, char** argv) {
  const std::vector<std::string_view> args(argv + 1, argv + argc);
  return netbuf::tools::runCommandLine(netbuf::tools::commandTable(), args, stdout, stderr);
}

#pragma once
// Runs the tool's runCommandLine on a test's own command table and captures what it writes on
// its out and err streams (tests of tools/command_line.hpp and the options built on it).
#include <doctest/doctest.h>
#include <stdio.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "command_line.hpp"

namespace netbuf::test {

/// What one runCommandLine call returned and wrote.
struct CommandLineRun {
  int rc = -1;
  std::string out, err;
};

/// The whole of a temporary file written so far; closes it.
inline std::string readBackAndClose(FILE* f) {
  std::string s;
  std::rewind(f);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

inline CommandLineRun runCommands(std::span<const tools::Command> table,
                                  std::vector<std::string_view> args) {
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  CommandLineRun r;
  r.rc = tools::runCommandLine(table, args, out, err);
  r.out = readBackAndClose(out);
  r.err = readBackAndClose(err);
  return r;
}

}  // namespace netbuf::test

#pragma once
// Running a Python peer from a test: a shell command's output and status, and the interpreter to
// use. A test whose peer is missing FAILS (REQUIRE on findPython's result), it never skips.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace netbuf::test {

struct Output {
  int status = -1;
  std::string text;
};

/// Runs a shell command; its stdout and stderr together, and its exit status.
inline Output run(const std::string& command) {
  Output out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.text.append(buf.data(), n);
  const int st = ::pclose(p);
  out.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

/// The first interpreter that can `import module`: $NETBUF_PYTHON, python3 on PATH, then
/// /usr/bin/python3 (Debian's python3-* modules install there, and a PATH python3 from pyenv or a
/// venv may not see them). Empty when none can; `tried` says what was tried and why it failed.
inline std::string findPython(const std::string& module, std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("NETBUF_PYTHON"); env != nullptr && *env != '\0')
    candidates.emplace_back(env);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (const std::string& py : candidates) {
    const Output o = run("'" + py + "' -c 'import " + module + "'");
    if (o.status == 0) return py;
    tried += "  " + py + ": exit " + std::to_string(o.status) + ": " + o.text + "\n";
  }
  return {};
}

}  // namespace netbuf::test

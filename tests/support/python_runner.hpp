#pragma once
// Running a Python peer or interop script from a test: a shell command's output and exit status,
// shell quoting, and the interpreter to use. A test whose interpreter or module is missing FAILS
// (requirePython REQUIREs one), it never skips. NETBUF_PYTHON chooses the interpreter.

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace netbuf::test {

struct Output {
  int status = -1;   ///< the exit status; -1 when the command did not exit normally
  std::string text;  ///< stdout and stderr together
};

/// Runs a shell command and waits for it.
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

/// s as one shell word: 'it'\''s'.
inline std::string shellQuote(std::string_view s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q.push_back(c);
    }
  }
  return q + "'";
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
    const Output o = run(shellQuote(py) + " -c " + shellQuote("import " + module));
    if (o.status == 0) return py;
    tried += "  " + py + ": exit " + std::to_string(o.status) + ": " + o.text + "\n";
  }
  return {};
}

/// findPython(module), REQUIREd to succeed; the failure says what to install and what was tried.
inline std::string requirePython(const std::string& module, std::string_view install) {
  std::string tried;
  const std::string python = findPython(module, tried);
  REQUIRE_MESSAGE(!python.empty(), "no python3 that can import "
                                       << module << " (" << install
                                       << ", or set NETBUF_PYTHON); tried:\n"
                                       << tried);
  return python;
}

/// The command line that runs script with python, each argument quoted.
inline std::string pythonCommand(const std::string& python, const std::filesystem::path& script,
                                 const std::vector<std::string>& args = {}) {
  REQUIRE_MESSAGE(std::filesystem::exists(script), "missing " << script.string());
  std::string command = shellQuote(python);
  command.append(" ").append(shellQuote(script.string()));
  for (const std::string& a : args) command.append(" ").append(shellQuote(a));
  return command;
}

}  // namespace netbuf::test

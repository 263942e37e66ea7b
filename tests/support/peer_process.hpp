#pragma once
// Real peers for interoperability tests (nginx, Python, redis-server...): a process run under
// timeout(1) in a process group of its own and killed with its children at the end of its scope,
// and the loopback port helpers that start one listening. Failures REQUIRE (a missing peer fails
// the test, it never skips).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

extern char** environ;

namespace netbuf::test {

/// A peer process: argv run under `timeout -k 2 60` in a process group of its own (stdout and
/// stderr to log), the whole group killed (TERM, then KILL) when the guard goes out of scope, so
/// that neither a failing test nor the peer's own children leave anything running.
class PeerProcess {
 public:
  PeerProcess(const std::vector<std::string>& argv, std::filesystem::path log)
      : log_(std::move(log)) {
    std::vector<std::string> full = {"timeout", "-k", "2", "60"};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> args;
    for (std::string& a : full) args.push_back(a.data());
    args.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);  // a group of its own, led by the child
    const int rc = ::posix_spawnp(&pid_, "timeout", &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    REQUIRE_MESSAGE(rc == 0, "cannot start " << argv.front() << ": " << std::strerror(rc));
  }
  ~PeerProcess() { stop(); }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  /// Whether it still runs (reaps it when it has exited).
  bool running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  void stop() {
    using namespace std::chrono_literals;
    if (!running()) return;
    ::kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (!running()) return;
      std::this_thread::sleep_for(10ms);
    }
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  std::string log() const { return readFile(log_); }

 private:
  std::filesystem::path log_;
  pid_t pid_ = -1;
};

/// A loopback port free now (the peer binds it a moment later).
inline unsigned short freePort() {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

/// Whether something accepts connections on 127.0.0.1:port.
inline bool accepts(unsigned short port) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  boost::system::error_code ec;
  s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  return !ec;
}

/// Starts a peer that listens on the port its command line names (argvFor(port), a port free
/// now) and waits up to `wait` until ready(port) (by default: it accepts connections); returns the
/// port. Another process may take the port between freePort() and the peer's bind: a peer that
/// exits saying "Address already in use" is started again on another port (3 tries). REQUIREs
/// success, showing the peer's log.
inline unsigned short startListening(
    std::optional<PeerProcess>& process,
    const std::function<std::vector<std::string>(unsigned short)>& argvFor,
    const std::filesystem::path& log, std::string_view what,
    const std::function<bool(unsigned short)>& ready = accepts,
    std::chrono::milliseconds wait = std::chrono::seconds(10)) {
  using namespace std::chrono_literals;
  for (int attempt = 1;; ++attempt) {
    const unsigned short port = freePort();
    process.reset();
    process.emplace(argvFor(port), log);
    const auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline && process->running()) {
      if (ready(port)) return port;
      std::this_thread::sleep_for(20ms);
    }
    const bool exited = !process->running();
    const std::string text = process->log();
    const bool taken = exited && text.find("in use") != std::string::npos;
    REQUIRE_MESSAGE((taken && attempt < 3),
                    what << (exited ? " exited early"
                                    : " is not ready after " + std::to_string(wait.count()) + " ms")
                         << " (port " << port << "):\n"
                         << text);
  }
}

}  // namespace netbuf::test

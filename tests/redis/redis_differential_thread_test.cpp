// Differential test: the same command scripts against a real redis-server 7.0 and an in-process
// netbuf RedisServer (one loop, then three sharded loops), each over a raw loopback connection,
// in RESP2 and again after HELLO 3, every reply compared byte for byte. Then malformed requests
// (protocol errors) sent to both, comparing everything received until each closes.
//
// Scripts are tests/redis/scripts/*.txt, one command a line in redis-cli's syntax (words, "double
// quoted" with \n \r \t \xHH escapes, 'single quoted'); '#' starts a comment line. Directives:
//   !inline <text>          sends <text>\r\n as an inline command (one reply)
//   !raw <n> "<bytes>"      sends the unescaped bytes as they are and reads n replies
//   #!single-shard          (anywhere) the script's replies depend on how keys spread over
//                           shards (KEYS with several matches): not run on the sharded server
// Each script starts with FLUSHALL on both servers and runs on a fresh connection to each.
//
// What legitimately differs is masked or left out of the scripts: HELLO's "version" and "id"
// fields (the client id counts the server's connections); the order of replies that follow
// redis-server's randomly seeded hash tables (SMEMBERS and HGETALL of large sets and hashes, SPOP
// with a count under the size, KEYS and CONFIG GET with several matches); exact PTTLs. The
// reference redis-server runs with `--databases 1`, the keyspace's own configuration (SELECT 1 is
// out of range, CONFIG GET databases says 1).
#include <netbuf/redis/redis_server.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/loopback_socket.hpp"
#include "support/redis_server_process.hpp"

using namespace netbuf;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace fs = std::filesystem;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kIncomplete = std::string::npos;
constexpr std::size_t kMalformed = std::string::npos - 1;

/// The end of the RESP2/RESP3 value starting at pos in s: kIncomplete when more bytes are
/// needed, kMalformed when the bytes are not RESP.
std::size_t valueEnd(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return kIncomplete;
  const std::size_t eol = s.find("\r\n", pos);
  if (eol == std::string_view::npos) return kIncomplete;
  const char type = s[pos];
  const std::string_view line = s.substr(pos + 1, eol - pos - 1);
  const std::size_t next = eol + 2;
  auto number = [&](long long& n) {
    char* end = nullptr;
    const std::string text(line);
    n = std::strtoll(text.c_str(), &end, 10);
    return !text.empty() && *end == '\0';
  };
  long long n = 0;
  switch (type) {
    case '+':
    case '-':
    case ':':
    case '_':
    case '#':
    case ',':
    case '(':
      return next;
    case '$':
    case '!':
    case '=':
      if (!number(n)) return kMalformed;
      if (n < 0) return next;
      if (s.size() < next + static_cast<std::size_t>(n) + 2) return kIncomplete;
      return next + static_cast<std::size_t>(n) + 2;
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      if (!number(n)) return kMalformed;
      if (n < 0) return next;
      const long long items = (type == '%' || type == '|') ? n * 2 : n;
      std::size_t at = next;
      for (long long i = 0; i < items; ++i) {
        at = valueEnd(s, at);
        if (at >= kMalformed) return at;
      }
      return type == '|' ? valueEnd(s, at) : at;  // an attribute precedes its value
    }
    default:
      return kMalformed;
  }
}

std::string escaped(std::string_view s) {
  std::string out;
  for (unsigned char ch : s) {
    if (ch == '\r')
      out += "\\r";
    else if (ch == '\n')
      out += "\\n";
    else if (ch == '\\')
      out += "\\\\";
    else if (ch < 0x20 || ch >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    } else {
      out += static_cast<char>(ch);
    }
  }
  if (out.size() > 600) out = out.substr(0, 600) + "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}

/// A loopback client on a non-blocking socket; every wait is bounded by a deadline.
class Conn {
 public:
  explicit Conn(unsigned short port) : sock_(port) {}

  void send(std::string_view bytes) {
    // A peer that closes part-way is fine: what it sent before is still read and compared.
    const auto ec = sock_.sendAll(bytes, Clock::now() + 10s);
    REQUIRE_MESSAGE(ec != asio::error::timed_out, "send timed out");
  }

  /// The bytes of the next reply; what was received so far when the connection closed or 5 s
  /// passed without a complete reply (the comparison shows it).
  std::string reply() {
    const auto deadline = Clock::now() + 5s;
    std::string& buf = sock_.buffer();
    for (;;) {
      const std::size_t end = valueEnd(buf, 0);
      if (end == kMalformed) {
        std::string bad = "<malformed> " + buf;
        buf.clear();
        return bad;
      }
      if (end != kIncomplete) {
        std::string out = buf.substr(0, end);
        buf.erase(0, end);
        return out;
      }
      if (sock_.closed() || !sock_.fill(deadline)) {
        std::string partial = std::exchange(buf, {});
        return partial + (sock_.closed() ? "<closed>" : "<timeout>");
      }
    }
  }

  /// Everything until the peer closes, plus "<timeout>" when it has not closed within 5 s.
  std::string untilClosed() {
    const auto deadline = Clock::now() + 5s;
    while (!sock_.closed()) {
      if (!sock_.fill(deadline)) return std::exchange(sock_.buffer(), {}) + "<timeout>";
    }
    return std::exchange(sock_.buffer(), {});
  }

 private:
  netbuf::test::LoopbackSocket sock_;
};

/// redis-cli's sdssplitargs: words, "..." with escapes, '...'; false on unbalanced quotes.
bool splitArgs(std::string_view line, std::vector<std::string>& out) {
  std::size_t i = 0;
  auto hex = [](char ch) {
    return std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : (std::tolower(ch) - 'a' + 10);
  };
  for (;;) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i == line.size()) return true;
    std::string cur;
    bool inDq = false, inSq = false;
    for (;;) {
      if (inDq) {
        if (i == line.size()) return false;
        const char ch = line[i];
        if (ch == '\\' && i + 3 < line.size() && line[i + 1] == 'x' &&
            std::isxdigit(static_cast<unsigned char>(line[i + 2])) &&
            std::isxdigit(static_cast<unsigned char>(line[i + 3]))) {
          cur += static_cast<char>(hex(line[i + 2]) * 16 + hex(line[i + 3]));
          i += 3;
        } else if (ch == '\\' && i + 1 < line.size()) {
          const char e = line[++i];
          cur += e == 'n'   ? '\n'
                 : e == 'r' ? '\r'
                 : e == 't' ? '\t'
                 : e == 'b' ? '\b'
                 : e == 'a' ? '\a'
                            : e;
        } else if (ch == '"') {
          if (i + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[i + 1]))) {
            return false;
          }
          inDq = false;
          ++i;
          break;
        } else {
          cur += ch;
        }
      } else if (inSq) {
        if (i == line.size()) return false;
        const char ch = line[i];
        if (ch == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
          cur += '\'';
          ++i;
        } else if (ch == '\'') {
          if (i + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[i + 1]))) {
            return false;
          }
          inSq = false;
          ++i;
          break;
        } else {
          cur += ch;
        }
      } else {
        if (i == line.size() || std::isspace(static_cast<unsigned char>(line[i]))) break;
        if (line[i] == '"')
          inDq = true;
        else if (line[i] == '\'')
          inSq = true;
        else
          cur += line[i];
      }
      ++i;
    }
    out.push_back(std::move(cur));
  }
}

std::string multibulk(const std::vector<std::string>& args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const std::string& a : args) {
    s += "$";
    s += std::to_string(a.size());
    s += "\r\n";
    s += a;
    s += "\r\n";
  }
  return s;
}

struct Step {
  int lineNo = 0;
  std::string text;   // the script line
  std::string bytes;  // what goes on the wire
  std::size_t replies = 1;
  bool hello = false;  // HELLO: mask its version and id
  bool quit = false;
};

struct Script {
  std::string name;
  std::vector<Step> steps;
  bool singleShard = false;
};

Script loadScript(const fs::path& path) {
  Script script;
  script.name = path.filename().string();
  std::ifstream in(path);
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find("#!single-shard") == 0) script.singleShard = true;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    Step step;
    step.lineNo = lineNo;
    step.text = line;
    std::string name;
    if (line.starts_with("!inline ")) {
      step.bytes = line.substr(8) + "\r\n";
      std::vector<std::string> words;
      if (splitArgs(line.substr(8), words) && !words.empty()) name = words[0];
    } else if (line.starts_with("!raw ")) {
      std::vector<std::string> words;
      REQUIRE_MESSAGE((splitArgs(line.substr(5), words) && words.size() == 2),
                      script.name << ":" << lineNo << ": !raw <replies> \"<bytes>\"");
      step.replies = std::stoul(words[0]);
      step.bytes = words[1];
    } else {
      std::vector<std::string> args;
      REQUIRE_MESSAGE((splitArgs(line, args) && !args.empty()),
                      script.name << ":" << lineNo << ": cannot parse the line");
      step.bytes = multibulk(args);
      name = args[0];
    }
    for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    step.hello = name == "HELLO";
    step.quit = name == "QUIT";
    script.steps.push_back(std::move(step));
  }
  return script;
}

std::vector<Script> loadScripts() {
  const fs::path dir = fs::path(__FILE__).parent_path() / "scripts";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".txt") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<Script> scripts;
  for (const fs::path& f : files) scripts.push_back(loadScript(f));
  REQUIRE_MESSAGE(!scripts.empty(), "no scripts in " << dir);
  return scripts;
}

/// Replaces what follows `key` (a bulk string in a map or flat array) with a placeholder: the
/// next value, a bulk string or an integer.
void maskField(std::string& reply, std::string_view key) {
  std::string needle = "$" + std::to_string(key.size()) + "\r\n";
  needle += key;
  needle += "\r\n";
  const std::size_t at = reply.find(needle);
  if (at == std::string::npos) return;
  const std::size_t from = at + needle.size();
  const std::size_t to = valueEnd(reply, from);
  if (to >= kMalformed) return;
  reply.replace(from, to - from, "<masked>");
}

std::string masked(const Step& step, std::string reply) {
  if (step.hello) {
    maskField(reply, "version");
    maskField(reply, "id");
  }
  return reply;
}

struct Totals {
  std::size_t commands = 0;
  std::size_t mismatches = 0;
};

/// Runs one script against both servers; prelude (HELLO 3 or nothing) first.
void runScript(const Script& script, unsigned short redisPort, unsigned short netbufPort,
               bool resp3, std::size_t threads, Totals& totals) {
  Conn redis(redisPort), netbuf(netbufPort);
  std::vector<Step> steps;
  auto add = [&](std::string_view line) {
    Step s;
    s.text = line;
    std::vector<std::string> args;
    splitArgs(line, args);
    s.bytes = multibulk(args);
    s.hello = args[0] == "HELLO";
    steps.push_back(std::move(s));
  };
  if (resp3) add("HELLO 3");
  add("FLUSHALL");
  steps.insert(steps.end(), script.steps.begin(), script.steps.end());
  bool closed = false;
  for (const Step& step : steps) {
    redis.send(step.bytes);
    netbuf.send(step.bytes);
    for (std::size_t r = 0; r < step.replies; ++r) {
      const std::string expected = masked(step, redis.reply());
      const std::string actual = masked(step, netbuf.reply());
      // Both servers silent would compare equal: a reply must have come.
      REQUIRE_MESSAGE(!expected.ends_with("<timeout>"),
                      script.name << ":" << step.lineNo << ": redis-server did not answer "
                                  << step.text << " (got " << escaped(expected) << ")");
      ++totals.commands;
      if (expected != actual) ++totals.mismatches;
      CHECK_MESSAGE(actual == expected, script.name << ":" << step.lineNo << " ("
                                                    << (resp3 ? "RESP3" : "RESP2") << ", threads "
                                                    << threads << ")\n  command: " << step.text
                                                    << "\n  redis:   " << escaped(expected)
                                                    << "\n  netbuf:  " << escaped(actual));
    }
    if (step.quit) {
      closed = true;
      break;
    }
  }
  if (closed) {
    const std::string expected = redis.untilClosed();
    const std::string actual = netbuf.untilClosed();
    CHECK_MESSAGE(actual == expected, script.name << ": after QUIT\n  redis:  " << escaped(expected)
                                                  << "\n  netbuf: " << escaped(actual));
  }
}

/// A netbuf server on 127.0.0.1:0 with its own loops.
struct NetbufServer {
  explicit NetbufServer(std::size_t threads) : server(options(threads)) { server.start(); }
  ~NetbufServer() { server.shutdownGracefully(5s); }
  static RedisServer::Options options(std::size_t threads) {
    RedisServer::Options o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = threads;
    return o;
  }
  RedisServer server;
};

}  // namespace

TEST_CASE("RedisServer answers the scripts with redis-server's bytes, RESP2 and RESP3") {
  const std::vector<Script> scripts = loadScripts();
  // The keyspace has one database: so has the reference.
  test::RedisServerProcess redis({"--databases", "1"});
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    NetbufServer netbuf(threads);
    Totals totals;
    std::size_t ran = 0;
    for (const Script& script : scripts) {
      if (threads > 1 && script.singleShard) continue;
      ++ran;
      for (bool resp3 : {false, true}) {
        runScript(script, redis.port(), netbuf.server.port(), resp3, threads, totals);
      }
    }
    MESSAGE("threads " << threads << ": " << ran << " scripts, " << totals.commands
                       << " replies compared (RESP2 and RESP3), " << totals.mismatches
                       << " mismatches");
  }
}

TEST_CASE("RedisServer closes on malformed requests as redis-server does, with the same bytes") {
  // A QUIT after each case ends the connection when the bytes before it were no protocol error.
  const std::string quit = "*1\r\n$4\r\nQUIT\r\n";
  const std::string longInline(70000, 'a');
  const std::vector<std::string> cases = {
      "*1\r\n$x\r\n",
      "*abc\r\n",
      "*1\r\n$600000000\r\n",
      "*1\r\n$-1\r\n",
      "*1\r\n$4\r\nPING\r\n*1\r\n$x\r\n",
      "*2\r\n$3\r\nGET\r\n:1\r\n",
      "*3000000000\r\n",
      "*-1\r\n" + quit,
      "*0\r\n" + quit,
      "*1\r\n$4\r\nPINGxx" + quit,
      "SET a \"b\r\n",
      "SET a 'b\r\n",
      "SET \"a\"b c\r\n",
      "PING\r\n\r\n  \r\nECHO \"a\\x41\\n\"\r\n" + quit,
      "$3\r\nfoo\r\n" + quit,
      ":1\r\n" + quit,
      longInline,
      "*1\r\n" + std::string(70000, '1'),
      "*1\r\n$" + std::string(70000, '1'),
  };
  test::RedisServerProcess redis({"--databases", "1"});
  for (std::size_t threads : {std::size_t{1}, std::size_t{3}}) {
    NetbufServer netbuf(threads);
    for (const std::string& bytes : cases) {
      Conn r(redis.port()), n(netbuf.server.port());
      r.send(bytes);
      n.send(bytes);
      const std::string expected = r.untilClosed();
      const std::string actual = n.untilClosed();
      CHECK_MESSAGE(!expected.ends_with("<timeout>"),
                    "redis-server did not close after " << escaped(bytes));
      CHECK_MESSAGE(actual == expected, "threads " << threads << ", sent: " << escaped(bytes)
                                                   << "\n  redis:  " << escaped(expected)
                                                   << "\n  netbuf: " << escaped(actual));
    }
  }
}

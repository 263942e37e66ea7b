// command_line.hpp: the option parser and the usage texts of the `netbuf` tool.
#include "command_line.hpp"
// (first include: proves the header is self-contained)

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <string>
#include <system_error>

namespace netbuf::tools {

// ---------------------------------------------------------------------------------------------
// value syntaxes

bool parseCount(std::string_view s, std::size_t& out) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return false;
  out = v;
  return true;
}

bool parseBytes(std::string_view s, std::size_t& out) {
  std::size_t mult = 1;
  for (std::string_view suffix : {"KiB", "Ki", "K", "k"}) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) {
      mult = 1024;
      s.remove_suffix(suffix.size());
      break;
    }
  }
  if (mult == 1) {
    for (std::string_view suffix : {"MiB", "Mi", "M"}) {
      if (s.size() > suffix.size() && s.ends_with(suffix)) {
        mult = std::size_t{1} << 20;
        s.remove_suffix(suffix.size());
        break;
      }
    }
  }
  std::size_t v = 0;
  if (!parseCount(s, v) || v > (SIZE_MAX / mult)) return false;
  out = v * mult;
  return true;
}

bool parseSeconds(std::string_view s, double& out) {
  const std::string str(s);
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(str, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (used != str.size() || !(v >= 0) || v > 86400) return false;
  out = v;
  return true;
}

// ---------------------------------------------------------------------------------------------
// ParsedOptions

namespace {

bool isHelp(std::string_view a) { return a == "--help" || a == "-h"; }

const OptionSpec* findOption(const Subcommand& sub, std::string_view name) {
  for (const OptionSpec& o : sub.options)
    if (o.name == name) return &o;
  return nullptr;
}

}  // namespace

ParsedOptions::ParsedOptions(const Subcommand& subcommand, std::span<const std::string_view> args)
    : subcommand_(&subcommand) {
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string_view a = args[k];
    if (isHelp(a)) {
      help_ = true;
      return;
    }
    const OptionSpec* o = findOption(subcommand, a);
    if (o == nullptr && !a.empty() && a.front() != '-') {
      // A positional argument: the first positional spec (a name without "--") not yet given.
      for (const OptionSpec& p : subcommand.options) {
        if (!p.name.empty() && p.name.front() != '-' && !given(p.name)) {
          given_.emplace_back(p.name, a);
          break;
        }
      }
      if (!given_.empty() && given_.back().second.data() == a.data()) continue;
      throw UsageError(fmt::format("unexpected argument '{}'", a));
    }
    if (o == nullptr) throw UsageError(fmt::format("unknown option '{}'", a));
    std::string_view value;
    if (!o->valueName.empty()) {
      if (k + 1 >= args.size())
        throw UsageError(fmt::format("option {} needs a value ({} {})", a, a, o->valueName));
      value = args[++k];
    }
    given_.emplace_back(o->name, value);
  }
  for (const OptionSpec& o : subcommand.options) {
    if (o.required && !given(o.name)) throw UsageError(fmt::format("{} is required", o.name));
  }
}

const OptionSpec& ParsedOptions::spec(std::string_view name) const {
  const OptionSpec* o = findOption(*subcommand_, name);
  if (o == nullptr)
    throw std::logic_error(
        fmt::format("netbuf {}: no option {} in the command table", subcommand_->name, name));
  return *o;
}

bool ParsedOptions::given(std::string_view name) const {
  spec(name);
  return std::any_of(given_.begin(), given_.end(), [&](const auto& g) { return g.first == name; });
}

std::optional<std::string_view> ParsedOptions::value(std::string_view name) const {
  const OptionSpec& o = spec(name);
  for (auto it = given_.rbegin(); it != given_.rend(); ++it)  // the last one counts
    if (it->first == name) return it->second;
  if (!o.defaultValue.empty()) return o.defaultValue;
  return std::nullopt;
}

std::string_view ParsedOptions::present(std::string_view name) const {
  const std::optional<std::string_view> v = value(name);
  if (!v) throw UsageError(fmt::format("{} is required", name));
  return *v;
}

std::string ParsedOptions::text(std::string_view name) const { return std::string(present(name)); }

void ParsedOptions::invalid(std::string_view name, std::string_view expected) const {
  const std::optional<std::string_view> v = value(name);
  throw UsageError(fmt::format("invalid value '{}' for {} ({})", v.value_or(""), name, expected));
}

std::size_t ParsedOptions::count(std::string_view name, std::size_t min, std::size_t max) const {
  std::size_t v = 0;
  if (!parseCount(present(name), v) || v < min || v > max)
    invalid(name, max == SIZE_MAX ? fmt::format("a count, at least {}", min)
                                  : fmt::format("a count in {}..{}", min, max));
  return v;
}

std::size_t ParsedOptions::bytes(std::string_view name, std::size_t min, std::size_t max) const {
  std::size_t v = 0;
  if (!parseBytes(present(name), v) || v < min || v > max)
    invalid(name, fmt::format("a byte count{}, K/M suffixes binary",
                              max == SIZE_MAX ? fmt::format(" of at least {}", min)
                                              : fmt::format(" in {}..{}", min, max)));
  return v;
}

double ParsedOptions::seconds(std::string_view name, double max, bool positive) const {
  double v = 0;
  if (!parseSeconds(present(name), v) || v > max || (positive && !(v > 0)))
    invalid(name, fmt::format("seconds in {}0, {}]", positive ? "(" : "[", max));
  return v;
}

std::uint16_t ParsedOptions::port(std::string_view name, bool nonZero) const {
  std::size_t v = 0;
  if (!parseCount(present(name), v) || v > 65535 || (nonZero && v == 0))
    invalid(name, nonZero ? "a port in 1..65535" : "a port in 0..65535");
  return static_cast<std::uint16_t>(v);
}

std::size_t ParsedOptions::choice(std::string_view name,
                                  std::span<const std::string_view> choices) const {
  const std::string_view v = present(name);
  for (std::size_t k = 0; k < choices.size(); ++k)
    if (choices[k] == v) return k;
  std::string expected = "one of";
  for (std::size_t k = 0; k < choices.size(); ++k)
    expected += fmt::format("{} {}", k == 0 ? "" : ",", choices[k]);
  invalid(name, expected);
}

// ---------------------------------------------------------------------------------------------
// usage texts

namespace {

constexpr std::size_t kWidth = 100;  // the synopsis wraps before this column

void printList(std::FILE* out, std::string_view indent, std::size_t width, std::string_view name,
               std::string_view text) {
  std::string line = fmt::format("{}{:<{}}  ", indent, name, width);
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find('\n', start);
    const std::string_view part =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    std::fprintf(out, "%s%.*s\n", line.c_str(), static_cast<int>(part.size()), part.data());
    if (end == std::string_view::npos) break;
    start = end + 1;
    line.assign(indent.size() + width + 2, ' ');
  }
}

std::string optionWithValue(const OptionSpec& o) {
  return o.valueName.empty() ? std::string(o.name) : fmt::format("{} {}", o.name, o.valueName);
}

}  // namespace

void printToolUsage(std::span<const Command> table, std::FILE* out) {
  std::fprintf(out, "usage: netbuf <command> <subcommand> [options]\n\ncommands:\n");
  std::size_t width = 0;
  for (const Command& c : table)
    for (const Subcommand& s : c.subcommands)
      width = std::max(width, c.name.size() + 1 + s.name.size());
  for (const Command& c : table) {
    std::fprintf(out, "\n  %.*s: %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
    for (const Subcommand& s : c.subcommands)
      printList(out, "    ", width, fmt::format("{} {}", c.name, s.name), s.summary);
  }
  std::fprintf(out,
               "\nrun 'netbuf <command> <subcommand> --help' (or 'netbuf help <command> "
               "<subcommand>') for its options.\n"
               "exit status: 0 success, 1 the command failed, 2 usage error.\n");
}

void printCommandUsage(const Command& command, std::FILE* out) {
  std::fprintf(out, "usage: netbuf %.*s <subcommand> [options]\n\n%.*s\n\nsubcommands:\n",
               static_cast<int>(command.name.size()), command.name.data(),
               static_cast<int>(command.summary.size()), command.summary.data());
  std::size_t width = 0;
  for (const Subcommand& s : command.subcommands) width = std::max(width, s.name.size());
  for (const Subcommand& s : command.subcommands) printList(out, "  ", width, s.name, s.summary);
  std::fprintf(out, "\nrun 'netbuf %.*s <subcommand> --help' for its options.\n",
               static_cast<int>(command.name.size()), command.name.data());
}

void printSubcommandUsage(const Command& command, const Subcommand& sub, std::FILE* out) {
  const std::string head = fmt::format("usage: netbuf {} {}", command.name, sub.name);
  std::string synopsis = head;
  std::size_t lineStart = 0;
  for (const OptionSpec& o : sub.options) {
    const std::string item =
        o.required ? optionWithValue(o) : fmt::format("[{}]", optionWithValue(o));
    if (synopsis.size() - lineStart + 1 + item.size() > kWidth) {
      synopsis += '\n';
      lineStart = synopsis.size();
      synopsis.append(head.size(), ' ');
    }
    synopsis += ' ';
    synopsis += item;
  }
  std::fprintf(out, "%s\n\n%.*s\n", synopsis.c_str(), static_cast<int>(sub.summary.size()),
               sub.summary.data());
  if (!sub.description.empty())
    std::fprintf(out, "\n%.*s\n", static_cast<int>(sub.description.size()), sub.description.data());
  if (sub.options.empty()) return;
  std::fprintf(out, "\noptions:\n");
  std::size_t width = 0;
  for (const OptionSpec& o : sub.options) width = std::max(width, optionWithValue(o).size());
  for (const OptionSpec& o : sub.options) {
    std::string help(o.help);
    if (o.required) help += " (required)";
    if (!o.defaultValue.empty()) help += fmt::format(" (default {})", o.defaultValue);
    printList(out, "  ", width, optionWithValue(o), help);
  }
}

// ---------------------------------------------------------------------------------------------
// dispatch

namespace {

const Command* findCommand(std::span<const Command> table, std::string_view name) {
  for (const Command& c : table)
    if (c.name == name) return &c;
  return nullptr;
}

const Subcommand* findSubcommand(const Command& command, std::string_view name) {
  for (const Subcommand& s : command.subcommands)
    if (s.name == name) return &s;
  return nullptr;
}

std::string subcommandNames(const Command& command) {
  std::string names;
  for (const Subcommand& s : command.subcommands)
    names += fmt::format("{}{}", names.empty() ? "" : ", ", s.name);
  return names;
}

int unknownCommand(std::span<const Command> table, std::string_view name, std::FILE* err) {
  std::fprintf(err, "netbuf: unknown command '%.*s'\n\n", static_cast<int>(name.size()),
               name.data());
  printToolUsage(table, err);
  return kExitUsage;
}

int unknownSubcommand(const Command& command, std::string_view name, std::FILE* err) {
  std::fprintf(err, "netbuf %.*s: unknown subcommand '%.*s' (available: %s)\n\n",
               static_cast<int>(command.name.size()), command.name.data(),
               static_cast<int>(name.size()), name.data(), subcommandNames(command).c_str());
  printCommandUsage(command, err);
  return kExitUsage;
}

/// `netbuf help [CMD [SUB]]`.
int help(std::span<const Command> table, std::span<const std::string_view> args, std::FILE* out,
         std::FILE* err) {
  if (args.empty()) {
    printToolUsage(table, out);
    return kExitOk;
  }
  const Command* c = findCommand(table, args[0]);
  if (c == nullptr) return unknownCommand(table, args[0], err);
  if (args.size() == 1) {
    printCommandUsage(*c, out);
    return kExitOk;
  }
  const Subcommand* s = findSubcommand(*c, args[1]);
  if (s == nullptr) return unknownSubcommand(*c, args[1], err);
  if (args.size() > 2) {
    std::fprintf(err, "netbuf help: unexpected argument '%.*s'\n\n",
                 static_cast<int>(args[2].size()), args[2].data());
    printToolUsage(table, err);
    return kExitUsage;
  }
  printSubcommandUsage(*c, *s, out);
  return kExitOk;
}

}  // namespace

int runCommandLine(std::span<const Command> table, std::span<const std::string_view> args,
                   std::FILE* out, std::FILE* err) {
  if (args.empty()) {
    printToolUsage(table, err);
    return kExitUsage;
  }
  if (args[0] == "help" || isHelp(args[0])) return help(table, args.subspan(1), out, err);
  const Command* c = findCommand(table, args[0]);
  if (c == nullptr) return unknownCommand(table, args[0], err);
  if (args.size() == 1) {
    std::fprintf(err, "netbuf %.*s: missing subcommand (available: %s)\n\n",
                 static_cast<int>(c->name.size()), c->name.data(), subcommandNames(*c).c_str());
    printCommandUsage(*c, err);
    return kExitUsage;
  }
  if (isHelp(args[1])) {
    printCommandUsage(*c, out);
    return kExitOk;
  }
  const Subcommand* s = findSubcommand(*c, args[1]);
  if (s == nullptr) return unknownSubcommand(*c, args[1], err);
  const std::string name = fmt::format("netbuf {} {}", c->name, s->name);
  try {
    const ParsedOptions options(*s, args.subspan(2));
    if (options.helpRequested()) {
      printSubcommandUsage(*c, *s, out);
      return kExitOk;
    }
    return s->run(options);
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::fprintf(err, "%s: %s\n\n", name.c_str(), e.what());
    printSubcommandUsage(*c, *s, err);
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(err, "%s: %s\n", name.c_str(), e.what());
    return kExitFailure;
  }
}

}  // namespace netbuf::tools

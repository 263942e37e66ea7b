#pragma once
// The `netbuf` tool's command line: a declarative table of commands (bench, serve, ...), each with
// its subcommands (bench strings, bench echo, ...), and one option parser driven by it.
//
//   netbuf <command> <subcommand> [--option [VALUE]]...
//
// A Subcommand lists its options (OptionSpec: name, value placeholder or flag, help, default);
// runCommandLine() finds the subcommand, parses the arguments against its options into
// ParsedOptions and calls its handler, which reads typed values through ParsedOptions' getters.
// Usage texts (`netbuf help`, `netbuf CMD --help`, `netbuf CMD SUB --help`) are generated from the
// same table, so what is documented is what is parsed.
//
// Exit codes: kExitOk (0) on success and for help; kExitFailure (1) when the command ran and
// failed (a handler's result, or an exception it threw, printed as "netbuf CMD SUB: what");
// kExitUsage (2) for every usage error: no or an unknown command or subcommand, an unknown option,
// an option without its value, a missing required option, an invalid value (UsageError from a
// getter or a handler). The message goes to stderr, followed by the usage of what was asked for.
//
// Options: "--name VALUE" (a value may start with '-': "--warmup -1" reads "-1" and rejects it as
// a value); a flag takes no value; given twice, the last one counts. "--help" or "-h" in place
// of an option prints the subcommand's usage on stdout and exits 0. A spec whose name does not
// start with '-' ("URL") is a positional argument: it takes the next argument that is not an
// option, in the table's order, and is read by its name like an option.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

/// One option of a subcommand.
struct OptionSpec {
  std::string_view name;               ///< "--seconds"
  std::string_view valueName;          ///< the value's placeholder in usage ("S"); empty: a flag
  std::string_view help;               ///< lines (joined by '\n') for the option list
  std::string_view defaultValue = {};  ///< the value when the option is absent; empty: none
  bool required = false;               ///< a usage error when absent
};

class ParsedOptions;

/// A subcommand's handler: runs it with its parsed options and returns the exit code.
using Handler = int (*)(const ParsedOptions& options);

struct Subcommand {
  std::string_view name;         ///< "strings"
  std::string_view summary;      ///< one line for the command's list
  std::string_view description;  ///< paragraphs between the synopsis and the options
  std::span<const OptionSpec> options;
  Handler run;
};

struct Command {
  std::string_view name;     ///< "bench"
  std::string_view summary;  ///< one line for `netbuf help`
  std::span<const Subcommand> subcommands;
};

/// A usage error: printed as "netbuf CMD SUB: <what>", then the usage, exit code kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The arguments of one subcommand, parsed against its options. Getters take an option's name as
/// spelled in the table; asking for a name the subcommand does not declare is a std::logic_error
/// (a bug in the handler, not a usage error). A getter returns the given value, else the table's
/// default; an absent option without a default reads as std::nullopt / false / the fallback.
class ParsedOptions {
 public:
  /// Parses args (what follows the subcommand's name). Throws UsageError for an unknown option, an
  /// option without its value and a missing required option; sets helpRequested() instead when
  /// "--help"/"-h" is met in place of an option (the rest is then not parsed).
  ParsedOptions(const Subcommand& subcommand, std::span<const std::string_view> args);

  const Subcommand& subcommand() const noexcept { return *subcommand_; }
  bool helpRequested() const noexcept { return help_; }

  /// Whether the option was given (not defaulted).
  bool given(std::string_view name) const;
  /// A flag: whether it was given.
  bool flag(std::string_view name) const { return given(name); }
  /// The value given, else the default, else nullopt.
  std::optional<std::string_view> value(std::string_view name) const;
  /// value(), required to be present (given or defaulted).
  std::string text(std::string_view name) const;

  /// A decimal count in [min, max] (digits only: no sign, space or suffix).
  std::size_t count(std::string_view name, std::size_t min = 0, std::size_t max = SIZE_MAX) const;
  /// A byte count, optionally suffixed K/Ki/KiB/k (x1024) or M/Mi/MiB (x2^20), in [min, max].
  std::size_t bytes(std::string_view name, std::size_t min = 0, std::size_t max = SIZE_MAX) const;
  /// Seconds (std::stod syntax, fractions allowed) in [0, max], or in (0, max] when positive.
  double seconds(std::string_view name, double max = 86400, bool positive = false) const;
  /// A port in 0..65535, or 1..65535 when nonZero.
  std::uint16_t port(std::string_view name, bool nonZero = false) const;
  /// The index of the value in `choices`.
  std::size_t choice(std::string_view name, std::span<const std::string_view> choices) const;

  /// Throws UsageError "invalid value 'V' for NAME (expected)" for the option's current value.
  [[noreturn]] void invalid(std::string_view name, std::string_view expected) const;

 private:
  const OptionSpec& spec(std::string_view name) const;
  /// The option's value; a UsageError when absent without a default.
  std::string_view present(std::string_view name) const;

  const Subcommand* subcommand_;
  std::vector<std::pair<std::string_view, std::string_view>> given_;  // name, value ("" for flags)
  bool help_ = false;
};

// ---- the value syntaxes, whole-string (false, out unchanged, unless all of s is a valid value)

/// A decimal count (std::from_chars: digits only, no sign or space, no overflow).
bool parseCount(std::string_view s, std::size_t& out);
/// A byte count with an optional K/Ki/KiB/k or M/Mi/MiB suffix (binary: 16K = 16384); the
/// product must fit a std::size_t.
bool parseBytes(std::string_view s, std::size_t& out);
/// Seconds in [0, 86400] (std::stod syntax, fractions allowed; NaN rejected).
bool parseSeconds(std::string_view s, double& out);

// ---- usage texts and dispatch

/// `netbuf help`: every command and its subcommands, one line each.
void printToolUsage(std::span<const Command> table, std::FILE* out);
/// `netbuf CMD --help`: the command's subcommands.
void printCommandUsage(const Command& command, std::FILE* out);
/// `netbuf CMD SUB --help`: synopsis, description, options with defaults.
void printSubcommandUsage(const Command& command, const Subcommand& subcommand, std::FILE* out);

/// Runs the command line args (argv without the program name) against the table: help, usage
/// errors (on err) or the subcommand's handler. Returns the exit code.
///   (none)                      tool usage on err, kExitUsage
///   help | --help | -h          tool usage on out, kExitOk
///   help CMD [SUB]              that usage on out, kExitOk (unknown: kExitUsage)
///   CMD | CMD --help            the command's usage on err (kExitUsage) | on out (kExitOk)
///   CMD SUB [options]           the handler's exit code (see the header comment for errors)
int runCommandLine(std::span<const Command> table, std::span<const std::string_view> args,
                   std::FILE* out, std::FILE* err);

}  // namespace netbuf::tools

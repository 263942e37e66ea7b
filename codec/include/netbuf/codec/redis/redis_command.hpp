#pragma once
// RedisCommand: one request a client sent, as the server sees it: the command name and its
// arguments as views (Redis's argv), from a multibulk request (*3 $3 SET ...) or an inline one
// (SET key value, split by Redis's quoting rules).
//
// Ownership: move-only. The arguments of a multibulk request view a retained slice of the
// decoder's cumulation (zero copy), which the command keeps alive; an inline request whose
// arguments needed unescaping (quotes, \x41) holds them in storage of its own. Up to
// kInlineArgs argument views are stored in the command itself: a command of that many arguments
// allocates nothing beyond the slice's reference. Moving a command keeps its views valid.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <span>
#include <string_view>

namespace netbuf {

class RedisCommand {
 public:
  static constexpr std::size_t kInlineArgs = 8;

  RedisCommand() noexcept = default;
  RedisCommand(RedisCommand&& other) noexcept;
  RedisCommand& operator=(RedisCommand&& other) noexcept;
  RedisCommand(const RedisCommand&) = delete;
  RedisCommand& operator=(const RedisCommand&) = delete;
  ~RedisCommand() = default;

  /// Number of arguments including the name (Redis's argc); 0 for an empty inline line.
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /// The command name as sent (any case); empty when size() == 0.
  std::string_view name() const noexcept { return size_ ? args()[0] : std::string_view(); }
  /// Argument i (0 is the name). Unchecked; use at() for a checked access.
  std::string_view operator[](std::size_t i) const noexcept { return args()[i]; }
  std::string_view at(std::size_t i) const;
  /// Every argument, the name first.
  std::span<const std::string_view> args() const noexcept {
    return {heap_ ? heap_.get() : inline_.v, size_};
  }
  /// Whether the name equals upperName ignoring ASCII case (upperName in upper case: "GET").
  bool is(std::string_view upperName) const noexcept;
  /// Whether it came as an inline command.
  bool isInline() const noexcept { return isInline_; }
  /// The stream offset of the command's first byte.
  std::uint64_t offset() const noexcept { return offset_; }
  /// A zero-copy ByteBuf of argument i (a retained slice of the input, or a copy when the
  /// argument is held by the command).
  ByteBuf retainedSlice(std::size_t i) const;

  // ---- used by the decoder and by tests to build a command ----
  /// A command of these arguments, viewing `input` (kept alive); `owned` holds the bytes of
  /// arguments that view nothing in input (their views point into it; a heap block does not move
  /// when the command does).
  static RedisCommand fromViews(ByteBuf input, std::span<const std::string_view> args,
                                std::uint64_t offset, bool isInline,
                                std::unique_ptr<char[]> owned = nullptr);
  /// A command that owns copies of args (tests, clients).
  static RedisCommand copyOf(std::span<const std::string_view> args);
  static RedisCommand copyOf(std::initializer_list<std::string_view> args);

 private:
  // Left uninitialised: a command fills only size() of them, and zero-filling all eight cost a
  // third of decoding a small pipelined command.
  union InlineArgs {
    InlineArgs() noexcept {}
    std::string_view v[kInlineArgs];
  } inline_;
  std::unique_ptr<std::string_view[]> heap_;
  std::size_t size_ = 0;
  ByteBuf input_;
  std::unique_ptr<char[]> owned_;
  std::uint64_t offset_ = 0;
  bool isInline_ = false;
};

}  // namespace netbuf

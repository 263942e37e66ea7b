#include <netbuf/codec/redis/redis_command.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace netbuf {

RedisCommand::RedisCommand(RedisCommand&& other) noexcept { *this = std::move(other); }

RedisCommand& RedisCommand::operator=(RedisCommand&& other) noexcept {
  if (this == &other) return *this;
  // The views point into other's input slice or owned block, neither of which moves: copying
  // the views and moving the owners keeps them valid.
  if (!other.heap_) std::copy(other.inline_.v, other.inline_.v + other.size_, inline_.v);
  heap_ = std::move(other.heap_);
  size_ = other.size_;
  input_ = std::move(other.input_);
  owned_ = std::move(other.owned_);
  offset_ = other.offset_;
  isInline_ = other.isInline_;
  other.size_ = 0;
  return *this;
}

std::string_view RedisCommand::at(std::size_t i) const {
  if (i >= size_) {
    throw std::out_of_range("RedisCommand argument " + std::to_string(i) + " out of range (" +
                            std::to_string(size_) + " arguments)");
  }
  return args()[i];
}

bool RedisCommand::is(std::string_view upperName) const noexcept {
  const std::string_view n = name();
  if (n.size() != upperName.size()) return false;
  for (std::size_t i = 0; i < n.size(); ++i) {
    // ASCII case folding: clearing bit 5 maps a-z to A-Z; the other bytes must match exactly.
    const char c = n[i];
    const char u = (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c;
    if (u != upperName[i]) return false;
  }
  return true;
}

ByteBuf RedisCommand::retainedSlice(std::size_t i) const {
  const std::string_view a = at(i);
  if (input_ && input_.readableBytes() > 0) {
    const char* base = reinterpret_cast<const char*>(input_.readPtr());
    if (a.data() >= base && a.data() + a.size() <= base + input_.readableBytes()) {
      return input_.retainedSlice(input_.readerIndex() + static_cast<std::size_t>(a.data() - base),
                                  a.size());
    }
  }
  return Unpooled::copiedBuffer(a);
}

RedisCommand RedisCommand::fromViews(ByteBuf input, std::span<const std::string_view> args,
                                     std::uint64_t offset, bool isInline,
                                     std::unique_ptr<char[]> owned) {
  RedisCommand c;
  if (args.size() > kInlineArgs) {
    c.heap_ = std::make_unique<std::string_view[]>(args.size());
    std::copy(args.begin(), args.end(), c.heap_.get());
  } else {
    std::copy(args.begin(), args.end(), c.inline_.v);
  }
  c.size_ = args.size();
  c.input_ = std::move(input);
  c.owned_ = std::move(owned);
  c.offset_ = offset;
  c.isInline_ = isInline;
  return c;
}

RedisCommand RedisCommand::copyOf(std::span<const std::string_view> args) {
  std::size_t total = 0;
  for (std::string_view a : args) total += a.size();
  auto owned = std::make_unique<char[]>(std::max<std::size_t>(total, 1));
  std::string_view small[kInlineArgs];
  std::unique_ptr<std::string_view[]> big;
  std::string_view* views = small;
  if (args.size() > kInlineArgs) {
    big = std::make_unique<std::string_view[]>(args.size());
    views = big.get();
  }
  char* w = owned.get();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].empty()) std::memcpy(w, args[i].data(), args[i].size());
    views[i] = std::string_view(w, args[i].size());
    w += args[i].size();
  }
  return fromViews(ByteBuf(), std::span<const std::string_view>(views, args.size()), 0, false,
                   std::move(owned));
}

}  // namespace netbuf

namespace netbuf {

RedisCommand RedisCommand::copyOf(std::initializer_list<std::string_view> args) {
  return copyOf(std::span<const std::string_view>(args.begin(), args.size()));
}

}  // namespace netbuf

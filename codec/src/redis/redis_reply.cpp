// RedisReply (redis_reply.hpp): the one operation that needs more than the header.

#include <netbuf/codec/redis/redis_reply.hpp>

#include <functional>
#include <stdexcept>
#include <string_view>

namespace netbuf {

namespace {

bool isStringType(RespType t) noexcept {
  switch (t) {
    case RespType::SimpleString:
    case RespType::SimpleError:
    case RespType::BulkString:
    case RespType::BulkError:
    case RespType::BigNumber:
    case RespType::VerbatimString:
      return true;
    default:
      return false;
  }
}

/// Whether [s, s + len) lies inside [base, base + size) (std::less: pointers into unrelated
/// blocks compare with a total order).
bool inside(const char* s, std::size_t len, const char* base, std::size_t size) noexcept {
  std::less_equal<const char*> le;
  return base != nullptr && le(base, s) && le(s + len, base + size) && le(s, s + len);
}

}  // namespace

ByteBuf RedisReply::retainedSlice(const RespValue& value) const {
  if (!isStringType(value.type())) {
    throw std::invalid_argument("RedisReply::retainedSlice: not a string value");
  }
  const std::string_view bytes = value.asString();
  if (input_.isValid()) {
    const auto* in = reinterpret_cast<const char*>(input_.readPtr());
    if (inside(bytes.data(), bytes.size(), in, input_.readableBytes())) {
      return input_.retainedSlice(
          input_.readerIndex() + static_cast<std::size_t>(bytes.data() - in), bytes.size());
    }
  }
  if (inside(bytes.data(), bytes.size(), owned_.get(), ownedSize_) ||
      (bytes.empty() && value.type() == RespType::BulkString)) {
    // A streamed string (assembled here), or an empty one that views nothing.
    ByteBuf copy = ByteBufAllocator::defaultAllocator().buffer(bytes.size());
    copy.writeBytes(bytes);
    return copy;
  }
  throw std::invalid_argument("RedisReply::retainedSlice: the value's bytes are not this reply's");
}

}  // namespace netbuf

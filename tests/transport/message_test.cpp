#include <netbuf/transport/message.hpp>

#include <doctest/doctest.h>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <netbuf/buffer/any_byte_buf.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

using namespace netbuf;

namespace {

struct Big {
  std::array<char, 400> bytes{};  // too big to be stored inline
  int* destroyed = nullptr;
  explicit Big(int* d) : destroyed(d) {}
  Big(Big&& o) noexcept : bytes(o.bytes), destroyed(std::exchange(o.destroyed, nullptr)) {}
  ~Big() {
    if (destroyed != nullptr) ++*destroyed;
  }
};

}  // namespace

TEST_CASE("Message: holds any movable value, inline or on the heap, with exact type queries") {
  Message empty;
  CHECK(empty.empty());
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK(empty.type() == typeid(void));

  Message s(std::string("hello"));
  CHECK(s.is<std::string>());
  CHECK_FALSE(s.is<int>());
  CHECK(s.as<std::string>() == "hello");
  const Message& cs = s;
  CHECK(cs.as<std::string>().size() == 5);
  CHECK_THROWS_AS(s.as<int>(), MessageTypeError);
  try {
    (void)s.take<ByteBuf>();
  } catch (const MessageTypeError& e) {
    CHECK(std::string(e.what()).find("not a netbuf::ByteBuf") != std::string::npos);
  }
  CHECK(s.is<std::string>());  // a failed take leaves the value
  Message moved(std::move(s));
  CHECK(s.empty());
  CHECK(moved.take<std::string>() == "hello");
  CHECK(moved.empty());

  int destroyed = 0;
  {
    Message big(Big{&destroyed});
    CHECK(big.is<Big>());
    Message other;
    other = std::move(big);
    CHECK(other.is<Big>());
    CHECK(destroyed == 0);
  }
  CHECK(destroyed == 1);  // the heap value is destroyed exactly once
}

TEST_CASE("Message: buffers travel inline and are released with the message") {
  ByteBuf buf = Unpooled::copiedBuffer(std::string_view("abc"));
  ByteBuf keep = buf.retainedDuplicate();
  {
    Message m(std::move(buf));
    CHECK(keep.refCnt() == 2);
    Message any(AnyByteBuf(keep.retainedSlice()));
    CHECK(any.is<AnyByteBuf>());
    CHECK(keep.refCnt() == 3);
    m = std::move(any);  // assigning releases the old value
    CHECK(keep.refCnt() == 2);
    m.reset();
    CHECK(keep.refCnt() == 1);
  }
  CHECK(typeName(typeid(std::string)).find("string") != std::string::npos);
}

TEST_CASE("typeName: types read as they are written in C++") {
  CHECK(typeName(typeid(int)) == "int");
  CHECK(typeName(typeid(std::string)) == "std::string");
  CHECK(typeName(typeid(std::string_view)) == "std::string_view");
  CHECK(typeName(typeid(std::vector<int>)) == "std::vector<int>");
  CHECK(typeName(typeid(std::vector<std::string>)) == "std::vector<std::string>");
  CHECK(typeName(typeid(std::map<std::string, std::vector<int>>)) ==
        "std::map<std::string, std::vector<int>>");
  CHECK(typeName(typeid(std::unordered_map<std::string, int>)) ==
        "std::unordered_map<std::string, int>");
  CHECK(typeName(typeid(std::unique_ptr<std::string>)) == "std::unique_ptr<std::string>");
  CHECK(typeName(typeid(std::pair<const std::string, int>)) == "std::pair<std::string const, int>");
  CHECK(typeName(typeid(AnyByteBuf)) == "netbuf::AnyByteBuf");
  CHECK(typeName(typeid(ByteBuf)) == "netbuf::ByteBuf");
  CHECK(typeName(typeid(std::vector<AnyByteBuf>)) == "std::vector<netbuf::AnyByteBuf>");
  CHECK(typeName(typeid(std::string*)) == "std::string*");
  CHECK(typeName(typeid(void (*)(int, std::string))) == "void (*)(int, std::string)");
  // A variant that is not AnyByteBuf keeps its arguments.
  CHECK(typeName(typeid(std::variant<int, std::string>)) == "std::variant<int, std::string>");
  // Only the standard templates' own defaults go.
  CHECK(typeName(typeid(std::pair<int, std::less<int>>)) == "std::pair<int, std::less<int>>");
  CHECK(typeName(typeid(std::set<int, std::greater<int>>)) == "std::set<int, std::greater<int>>");
  // Names it cannot parse come back as given.
  CHECK(readableTypeName("a<b") == "a<b");
}

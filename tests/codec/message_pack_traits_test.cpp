#include <netbuf/codec/msgpack/message_pack_traits.hpp>
// (first include: proves the header is self-contained)

#include <doctest/doctest.h>

#include <chrono>
#include <netbuf/codec/msgpack/message_pack_reader.hpp>

namespace demo {
struct Inner {
  std::string name;
  std::vector<std::int32_t> values;
  friend bool operator==(const Inner&, const Inner&) = default;
};
struct Outer {
  std::uint16_t id = 0;
  Inner inner;
  std::vector<Inner> list;
  std::optional<double> score;
  std::vector<std::byte> blob;
  std::map<std::string, bool> flags;
  std::pair<std::int8_t, std::string> tag;
  netbuf::Timestamp when;
  friend bool operator==(const Outer&, const Outer&) = default;
};
// A recursive type: the typed API must bound its recursion by maxDepth.
struct Node {
  std::vector<Node> kids;
};
}  // namespace demo

using netbuf::Timestamp;
NETBUF_MSGPACK_FIELDS(demo::Inner, name, values)
NETBUF_MSGPACK_FIELDS(demo::Outer, id, inner, list, score, blob, flags, tag, when)
NETBUF_MSGPACK_FIELDS(demo::Node, kids)

using namespace netbuf;

namespace {
template <class T>
std::string packed(const T& v) {
  ByteBuf b = ByteBufAllocator::defaultAllocator().buffer(64);
  {
    MessagePackWriter w(b);
    msgpack::pack(w, v);
  }
  return std::string(b.readableStringView());
}
template <class T>
T unpacked(const std::string& bytes) {
  MessagePackReader r{std::as_bytes(std::span(bytes.data(), bytes.size()))};
  T v = msgpack::unpack<T>(r);
  CHECK(r.atEnd());
  return v;
}
template <class T>
void roundTrip(const T& v) {
  CHECK(unpacked<T>(packed(v)) == v);
}
MessagePackErrc codeOf(auto f) {
  try {
    f();
  } catch (const MessagePackError& e) {
    return e.code();
  }
  FAIL("no error");
  return MessagePackErrc::Truncated;
}
}  // namespace

TEST_CASE("scalars, range-checked integers") {
  roundTrip(true);
  roundTrip(std::int8_t{-128});
  roundTrip(std::uint64_t{UINT64_MAX});
  roundTrip(std::int64_t{INT64_MIN});
  roundTrip(1.5f);
  roundTrip(-2.25);
  roundTrip(std::string("h\xc3\xa9"));
  CHECK(codeOf([] { unpacked<std::uint8_t>(packed(256)); }) == MessagePackErrc::IntegerOverflow);
  CHECK(codeOf([] { unpacked<std::int8_t>(packed(-129)); }) == MessagePackErrc::IntegerOverflow);
  CHECK(codeOf([] { unpacked<unsigned>(packed(-1)); }) == MessagePackErrc::IntegerOverflow);
  CHECK(codeOf([] { unpacked<float>(packed(1.0)); }) == MessagePackErrc::TypeMismatch);
  CHECK(unpacked<double>(packed(1.0f)) == 1.0);
}

TEST_CASE("views, bin vs str, containers, optional, time points") {
  const std::string s = packed(std::string_view("abc"));
  MessagePackReader r{std::as_bytes(std::span(s.data(), s.size()))};
  const auto v = msgpack::unpack<std::string_view>(r);
  CHECK(v == "abc");
  CHECK(v.data() == s.data() + 1);  // a view into the input
  const std::vector<std::byte> blob{std::byte{0}, std::byte{0xff}};
  CHECK(static_cast<unsigned char>(packed(blob)[0]) == 0xc4);  // bin, never str
  CHECK(codeOf([&] { unpacked<std::string>(packed(blob)); }) == MessagePackErrc::TypeMismatch);
  const std::span<const std::byte> sp(blob);
  CHECK(packed(sp) == packed(blob));
  roundTrip(blob);
  roundTrip(std::vector<std::string>{"a", "b"});
  roundTrip(std::array<int, 3>{1, 2, 3});
  CHECK(codeOf([] { unpacked<std::array<int, 2>>(packed(std::array<int, 3>{})); }) ==
        MessagePackErrc::TypeMismatch);
  roundTrip(std::tuple<int, std::string, bool>{1, "x", true});
  roundTrip(std::map<int, std::string>{{1, "a"}, {2, "b"}});
  roundTrip(std::unordered_map<std::string, int>{{"k", 3}});
  roundTrip(std::optional<int>{});
  roundTrip(std::optional<int>{4});
  CHECK(packed(std::optional<int>{}) == "\xc0");
  roundTrip(Timestamp{-3, 999999999});
  const auto tp = std::chrono::system_clock::time_point(std::chrono::seconds(1700000000)) +
                  std::chrono::microseconds(123456);
  CHECK(unpacked<std::chrono::system_clock::time_point>(packed(tp)) == tp);
}

TEST_CASE("NETBUF_MSGPACK_FIELDS: nested structs, vectors, optional, bin") {
  demo::Outer o;
  o.id = 7;
  o.inner = {"in", {1, -2}};
  o.list = {{"a", {}}, {"b", {3}}};
  o.score = 0.5;
  o.blob = {std::byte{1}, std::byte{2}};
  o.flags = {{"x", true}};
  o.tag = {-1, "t"};
  o.when = {10, 20};
  const std::string bytes = packed(o);
  CHECK(unpacked<demo::Outer>(bytes) == o);
  // It is an ordinary map: a Document sees the field names.
  Document d;
  msgpack::decode(std::as_bytes(std::span(bytes.data(), bytes.size())), d);
  CHECK(d.root()["inner"]["name"].asStr() == "in");
  CHECK(d.root()["blob"].isBin());
  // Unknown keys are skipped, missing keys leave defaults, keys in any order.
  Document src;
  src.setRoot(src.map({{src.str("extra"), src.array({Value::nil()})},
                       {Value::uinteger(5), Value::nil()},
                       {src.str("score"), Value::nil()},
                       {src.str("id"), Value::uinteger(9)}}));
  ByteBuf b = msgpack::encode(src.root());
  const std::string in(b.readableStringView());
  const demo::Outer x = unpacked<demo::Outer>(in);
  CHECK(x.id == 9);
  CHECK(!x.score);
  CHECK(x.inner == demo::Inner{});
  CHECK(codeOf([] { unpacked<demo::Inner>(packed(3)); }) == MessagePackErrc::TypeMismatch);
}

TEST_CASE("typed API: nesting bombs hit maxDepth, not the stack") {
  // {"kids": [{"kids": [ ... ]}]} 100,000 levels deep.
  std::string bomb;
  for (int i = 0; i < 100000; ++i) bomb += std::string("\x81\xa4kids\x91", 7);
  bomb += std::string("\x81\xa4kids\x90", 7);
  CHECK(codeOf([&] { (void)unpacked<demo::Node>(bomb); }) == MessagePackErrc::DepthLimit);
  std::string arrays(200000, '\x91');
  arrays += '\x90';
  using Deep = std::vector<std::vector<std::vector<std::vector<int>>>>;
  CHECK(codeOf([&] { (void)unpacked<Deep>(arrays); }) == MessagePackErrc::TypeMismatch);
  // Within the limit it decodes; the limit is the reader's.
  std::string shallow;
  for (int i = 0; i < 10; ++i) shallow += std::string("\x81\xa4kids\x91", 7);
  shallow += std::string("\x81\xa4kids\x90", 7);
  const demo::Node n = unpacked<demo::Node>(shallow);
  CHECK(n.kids.size() == 1);
  MessagePackReadOptions tight;
  tight.limits.maxDepth = 5;
  MessagePackReader r{std::as_bytes(std::span(shallow.data(), shallow.size())), tight};
  CHECK(codeOf([&] { (void)msgpack::unpack<demo::Node>(r); }) == MessagePackErrc::DepthLimit);
}

TEST_CASE("typed API: time points outside the duration's range are errors, not overflow") {
  using namespace std::chrono;
  // Seconds 2^34 - 1 (64-bit form) do not fit nanoseconds since the epoch (year 2262).
  const std::string far = packed(Timestamp{(std::int64_t{1} << 34) - 1, 5});
  CHECK(codeOf([&] { (void)unpacked<time_point<system_clock, nanoseconds>>(far); }) ==
        MessagePackErrc::IntegerOverflow);
  // A coarser duration holds it.
  const auto coarse = unpacked<time_point<system_clock, seconds>>(far);
  CHECK(coarse.time_since_epoch().count() == (std::int64_t{1} << 34) - 1);
  // Packing a coarse time point far from the epoch splits seconds and nanoseconds exactly.
  const time_point<system_clock, seconds> big{seconds(100'000'000'000)};
  CHECK(unpacked<Timestamp>(packed(big)) == Timestamp{100'000'000'000, 0});
  const time_point<system_clock, microseconds> before{microseconds(-1)};
  CHECK(unpacked<Timestamp>(packed(before)) == Timestamp{-1, 999'999'000});
  // Minutes whose seconds overflow int64 cannot be packed.
  const time_point<system_clock, duration<std::int64_t, std::ratio<60>>> huge{
      duration<std::int64_t, std::ratio<60>>(INT64_MAX / 2)};
  CHECK_THROWS_AS((void)packed(huge), EncoderError);
}

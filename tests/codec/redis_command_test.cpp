#include <netbuf/codec/redis/redis_command.hpp>

#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using namespace netbuf;

TEST_CASE("RedisCommand: copyOf holds its own arguments") {
  std::string name = "set";
  std::string key = "key";
  RedisCommand c = RedisCommand::copyOf({name, key, "value"});
  name = "xxx";
  key = "yyy";
  CHECK(c.size() == 3);
  CHECK_FALSE(c.empty());
  CHECK(c.name() == "set");
  CHECK(c[1] == "key");
  CHECK(c.at(2) == "value");
  CHECK_THROWS_AS(c.at(3), std::out_of_range);
  CHECK(c.is("SET"));
  CHECK_FALSE(c.is("GET"));
  CHECK_FALSE(c.is("SETX"));
  CHECK_FALSE(c.isInline());
  CHECK(c.args().size() == 3);
}

TEST_CASE("RedisCommand: an empty command") {
  RedisCommand c;
  CHECK(c.empty());
  CHECK(c.size() == 0);
  CHECK(c.name().empty());
  CHECK_FALSE(c.is("GET"));
  RedisCommand e = RedisCommand::copyOf(std::initializer_list<std::string_view>{});
  CHECK(e.empty());
}

TEST_CASE("RedisCommand: is() folds only ASCII letters") {
  CHECK(RedisCommand::copyOf({"hGeTaLl"}).is("HGETALL"));
  CHECK_FALSE(RedisCommand::copyOf({"get\xC0"}).is("GET\xE0"));
  CHECK_FALSE(RedisCommand::copyOf({"g[t"}).is("G{T"));
}

TEST_CASE("RedisCommand: more arguments than fit inline, moved") {
  std::vector<std::string> storage;
  std::vector<std::string_view> args;
  for (int i = 0; i < 20; ++i) storage.push_back("arg" + std::to_string(i));
  for (const std::string& s : storage) args.emplace_back(s);
  RedisCommand c = RedisCommand::copyOf(args);
  RedisCommand moved = std::move(c);
  CHECK(c.size() == 0);  // NOLINT(bugprone-use-after-move): a moved-from command is empty
  REQUIRE(moved.size() == 20);
  for (int i = 0; i < 20; ++i) CHECK(moved[i] == storage[i]);
  RedisCommand assigned;
  assigned = std::move(moved);
  CHECK(assigned[19] == "arg19");
}

TEST_CASE("RedisCommand: fromViews views the input without copying; retainedSlice shares it") {
  ByteBuf input = Unpooled::copiedBuffer(std::string_view("*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"));
  const char* base = reinterpret_cast<const char*>(input.readPtr());
  const std::string_view views[] = {std::string_view(base + 8, 3), std::string_view(base + 17, 3)};
  RedisCommand c = RedisCommand::fromViews(input.retainedSlice(), views, 100, false);
  CHECK(c.offset() == 100);
  CHECK(c.name() == "GET");
  CHECK(c[1].data() == base + 17);
  ByteBuf slice = c.retainedSlice(1);
  CHECK(slice.readableStringView() == "key");
  CHECK(reinterpret_cast<const char*>(slice.readPtr()) == base + 17);
  RedisCommand moved = std::move(c);
  input = ByteBuf();
  CHECK(moved[1] == "key");  // the command's slice keeps the bytes alive
  CHECK(slice.readableStringView() == "key");
}

TEST_CASE("RedisCommand: retainedSlice of an owned argument is a copy") {
  auto owned = std::make_unique<char[]>(4);
  std::memcpy(owned.get(), "PING", 4);
  const std::string_view views[] = {std::string_view(owned.get(), 4)};
  RedisCommand c = RedisCommand::fromViews(ByteBuf(), views, 0, true, std::move(owned));
  CHECK(c.isInline());
  ByteBuf s = c.retainedSlice(0);
  CHECK(s.readableStringView() == "PING");
  CHECK(reinterpret_cast<const char*>(s.readPtr()) != c[0].data());
}

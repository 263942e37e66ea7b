// JSON benchmarks: netbuf's JSON codec beside simdjson 3.0.1, RapidJSON 1.1 and nlohmann::json 3.11
// (Debian's libsimdjson-dev, rapidjson-dev and nlohmann-json3-dev; used only here)
// (docs/benchmarks.md):
//
//   small    canonical serialization of the Perl benchmark's hash {"z":"z","a":"a","c":["2","1"]}
//            (keys sorted on every call; all three must print {"a":"a","c":["2","1"],"z":"z"}):
//              netbuf/canonical     a Value tree built in insertion order z, a, c ->
//                                   json::write(canonical) into a reused ByteBuf
//              netbuf/typed         the typed API (json_traits.hpp): a struct whose fields are
//                                   declared in the hash's order z, a, c; json::serialize
//                                   (canonical) into a reused ByteBuf writes them in RFC 8785
//                                   order, which NETBUF_JSON_FIELDS works out at compile time (the
//                                   schema-known path: the keys are sorted once, not per call)
//              nlohmann/dump        nlohmann::json (std::map keeps keys sorted) -> dump()
//              rapidjson/sorted     a rapidjson::Document whose members are sorted per call
//                                   (std::sort over its members), Writer into a StringBuffer
//   twitter/write   a synthetic twitter-like document of ~565 KB (generated below: 300 statuses
//            with users, entities, URLs, hashtags, non-ASCII text and escapes), serialized:
//            netbuf/write (compact), rapidjson/writer, nlohmann/dump
//   <doc>/parse     documents parsed into a DOM: twitter (above), numbers (~1 MB of GeoJSON-like
//            coordinates and integers) and strings (~1.2 MB of long mixed-script text), and three
//            small ones: rpc (an 84-byte JSON-RPC request), status (twitter's first status, ~1.9
//            KB) and coords (the first 20 points of numbers, ~830 bytes; no avx2 or nlohmann rows):
//              netbuf           json::parse into a Document cleared per call (the default engine,
//                               Auto: indexed from 256 bytes, so for all but rpc; strings
//                               without escapes are views)
//              netbuf_byte      the same with JsonParser::Engine::ByteAtATime
//              netbuf_indexed   the same with JsonParser::Engine::Indexed (stage 1 with the CPU's
//                               widest tier; netbuf_indexed_avx2 pins AVX2)
//              simdjson_dom     one dom::parser reused, padded input prepared once (simdjson's
//                               documented use)
//              rapidjson_dom    Document::Parse into a fresh Document per call
//              nlohmann         nlohmann::json::parse
//
// Sanity: the libraries parse the generated texts to the same documents (netbuf's and RapidJSON's
// compact output byte-identical for twitter and strings, every number of the numbers document
// equal to simdjson's); the canonical rows are checked for the exact expected output.
// --dump-documents=DIR writes the parse documents to DIR and exits.
#include <benchmark/benchmark.h>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <netbuf/buffer/utf8.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/json/json_traits.hpp>
#include <netbuf/codec/json/json_writer.hpp>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

using namespace netbuf;

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "json_bench: sanity check failed: %s\n", what);
  std::abort();
}

constexpr std::string_view kSmallCanonical = R"({"a":"a","c":["2","1"],"z":"z"})";

// ---------------------------------------------------------------------------- small

// The hash as a Value tree, its members given in the hash's order z, a, c, written canonically.
// sorted: built with Document::sortedMap, so kept in key order (as nlohmann::json's std::map keeps
// it) and walked without sorting; otherwise built with Document::map and sorted on every write.
void smallCanonicalTree(benchmark::State& state, bool sorted) {
  Document doc;
  const Member members[] = {{doc.str("z"), doc.str("z")},
                            {doc.str("a"), doc.str("a")},
                            {doc.str("c"), doc.array({doc.str("2"), doc.str("1")})}};
  const Value v = sorted ? doc.sortedMap(members) : doc.map(members);
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  JsonWriteOptions options;
  options.canonical = true;
  for (auto _ : state) {
    buf.clear();
    json::write(v, buf, options);
    benchmark::DoNotOptimize(buf.readPtr());
  }
  if (buf.readableStringView() != kSmallCanonical) die("netbuf canonical output");
  state.SetItemsProcessed(state.iterations());
}
void BM_SmallCanonical_Netbuf(benchmark::State& state) { smallCanonicalTree(state, false); }
BENCHMARK(BM_SmallCanonical_Netbuf)->Name("small/netbuf/canonical");
void BM_SmallSortedMap_Netbuf(benchmark::State& state) { smallCanonicalTree(state, true); }
BENCHMARK(BM_SmallSortedMap_Netbuf)->Name("small/netbuf/sorted-map");

struct SmallHash {
  std::string z;
  std::string a;
  std::vector<std::string> c;
};

}  // namespace
NETBUF_JSON_FIELDS(SmallHash, z, a, c)
namespace {

void BM_SmallTyped_Netbuf(benchmark::State& state) {
  const SmallHash h{"z", "a", {"2", "1"}};
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(256);
  JsonWriteOptions options;
  options.canonical = true;
  for (auto _ : state) {
    buf.clear();
    json::serialize(h, buf, options);
    benchmark::DoNotOptimize(buf.readPtr());
  }
  if (buf.readableStringView() != kSmallCanonical) die("netbuf typed output");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SmallTyped_Netbuf)->Name("small/netbuf/typed");

void BM_SmallCanonical_Nlohmann(benchmark::State& state) {
  nlohmann::json j;
  j["z"] = "z";
  j["a"] = "a";
  j["c"] = nlohmann::json::array({"2", "1"});
  std::string out;
  for (auto _ : state) {
    out = j.dump();
    benchmark::DoNotOptimize(out.data());
  }
  if (out != kSmallCanonical) die("nlohmann output");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SmallCanonical_Nlohmann)->Name("small/nlohmann/dump");

struct NameLess {
  bool operator()(const rapidjson::Value::Member& a, const rapidjson::Value::Member& b) const {
    const std::string_view x(a.name.GetString(), a.name.GetStringLength());
    const std::string_view y(b.name.GetString(), b.name.GetStringLength());
    return x < y;
  }
};

void BM_SmallCanonical_RapidJson(benchmark::State& state) {
  rapidjson::Document d;
  d.SetObject();
  auto& a = d.GetAllocator();
  d.AddMember("z", "z", a);
  d.AddMember("a", "a", a);
  rapidjson::Value arr(rapidjson::kArrayType);
  arr.PushBack("2", a).PushBack("1", a);
  d.AddMember("c", arr, a);
  rapidjson::StringBuffer sb;
  for (auto _ : state) {
    std::sort(d.MemberBegin(), d.MemberEnd(), NameLess());
    sb.Clear();
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    d.Accept(w);
    benchmark::DoNotOptimize(sb.GetString());
  }
  if (std::string_view(sb.GetString(), sb.GetSize()) != kSmallCanonical) die("rapidjson output");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SmallCanonical_RapidJson)->Name("small/rapidjson/sorted");

// ---------------------------------------------------------------------------- twitter-like

void appendEscaped(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
}

/// ~600 KB of twitter-search-like JSON, deterministic (fixed seed).
const std::string& twitterText() {
  static std::string* text = [] {
    std::mt19937_64 rng(42);
    const char* words[] = {
        "netbuf",    "server",     "buffer",      "caf\xc3\xa9", "\xe6\x9d\xb1\xe4\xba\xac",
        "latency",   "\"quoted\"", "line\nbreak", "throughput",  "\xf0\x9f\x98\x80",
        "zero-copy", "pipeline",   "C++",         "asio",        "event",
        "loop"};
    auto word = [&] { return std::string(words[rng() % std::size(words)]); };
    auto sentence = [&](int n) {
      std::string s;
      for (int i = 0; i < n; ++i) {
        if (i) s += ' ';
        s += word();
      }
      return s;
    };
    auto* out = new std::string();
    std::string& o = *out;
    o += "{\"statuses\":[";
    for (int i = 0; i < 300; ++i) {
      if (i) o += ',';
      const std::uint64_t id = 505874924095815681ULL + static_cast<std::uint64_t>(i) * 7919;
      o += "{\"metadata\":{\"result_type\":\"recent\",\"iso_language_code\":\"ja\"},";
      o += "\"created_at\":\"Sun Aug 31 00:29:15 +0000 2014\",";
      o += "\"id\":" + std::to_string(id) + ",\"id_str\":\"" + std::to_string(id) + "\",";
      o += "\"text\":";
      appendEscaped(o, sentence(18));
      o += ",\"source\":\"<a href=\\\"https://example.com/app\\\" rel=\\\"nofollow\\\">app</a>\",";
      o += "\"truncated\":false,\"in_reply_to_status_id\":null,\"in_reply_to_user_id\":null,";
      o += "\"user\":{\"id\":" + std::to_string(1186275104 + i) + ",\"id_str\":\"" +
           std::to_string(1186275104 + i) + "\",\"name\":";
      appendEscaped(o, sentence(2));
      o += ",\"screen_name\":\"user_" + std::to_string(i) + "\",\"location\":";
      appendEscaped(o, sentence(1));
      o += ",\"description\":";
      appendEscaped(o, sentence(40));
      o += ",\"url\":null,\"entities\":{\"description\":{\"urls\":[]}},\"protected\":false,";
      o += "\"followers_count\":" + std::to_string(rng() % 100000) +
           ",\"friends_count\":" + std::to_string(rng() % 5000) +
           ",\"listed_count\":" + std::to_string(rng() % 100) +
           ",\"created_at\":\"Sat Feb 16 13:40:25 +0000 2013\",\"favourites_count\":" +
           std::to_string(rng() % 20000) + ",\"utc_offset\":null,\"time_zone\":null,";
      o += "\"geo_enabled\":false,\"verified\":false,\"statuses_count\":" +
           std::to_string(rng() % 100000) + ",\"lang\":\"ja\",";
      o += "\"profile_background_color\":\"C0DEED\",\"profile_image_url\":"
           "\"http://pbs.twimg.com/profile_images/" +
           std::to_string(rng()) + "/normal.jpeg\",\"profile_sidebar_fill_color\":\"DDEEF6\",";
      o += "\"default_profile\":true,\"following\":false,\"notifications\":false},";
      o += "\"geo\":null,\"coordinates\":null,\"place\":null,\"contributors\":null,";
      o += "\"retweet_count\":" + std::to_string(rng() % 1000) +
           ",\"favorite_count\":" + std::to_string(rng() % 1000) + ",";
      o += "\"entities\":{\"hashtags\":[";
      for (int h = 0; h < 3; ++h) {
        if (h) o += ',';
        o += "{\"text\":";
        appendEscaped(o, word());
        o += ",\"indices\":[" + std::to_string(h * 10) + "," + std::to_string(h * 10 + 8) + "]}";
      }
      o += "],\"symbols\":[],\"urls\":[{\"url\":\"http://t.co/" + std::to_string(rng() % 100000) +
           "\",\"expanded_url\":\"https://example.com/a/b?c=" + std::to_string(i) +
           "\",\"indices\":[60,82]}],\"user_mentions\":[]},";
      o += "\"favorited\":false,\"retweeted\":false,\"possibly_sensitive\":false,"
           "\"lang\":\"ja\",\"score\":" +
           std::to_string(static_cast<double>(rng() % 100000) / 1000.0 + 0.0005) + "}";
    }
    o += "],\"search_metadata\":{\"completed_in\":0.087,\"max_id\":505874924095815681,"
         "\"query\":\"%E4%B8%80\",\"count\":300,\"since_id\":0}}";
    return out;
  }();
  return *text;
}

/// ~1 MB of numbers: 20000 [x, y] points of shortest round-trip doubles (GeoJSON-like, as in
/// canada.json) and 20000 integers of 1 to 19 digits, deterministic.
const std::string& numbersText() {
  static std::string* text = [] {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> lon(-180, 180), lat(-90, 90);
    auto* out = new std::string("{\"type\":\"LineString\",\"coordinates\":[");
    std::string& o = *out;
    char buf[64];
    for (int i = 0; i < 20000; ++i) {
      if (i) o += ',';
      o += '[';
      o.append(buf, std::to_chars(buf, buf + sizeof buf, lon(rng)).ptr);
      o += ',';
      o.append(buf, std::to_chars(buf, buf + sizeof buf, lat(rng)).ptr);
      o += ']';
    }
    o += "],\"ids\":[";
    for (int i = 0; i < 20000; ++i) {
      if (i) o += ',';
      const std::uint64_t v = rng() >> (rng() % 64);
      if (i % 3 == 0) o += '-';
      o += std::to_string(v % 9223372036854775807ULL);
    }
    o += "]}";
    return out;
  }();
  return *text;
}

/// ~1 MB of strings: 2000 messages whose bodies are 200-800 bytes of mixed ASCII and non-ASCII
/// words, one in eight with escapes (quotes, newlines, \u escapes), deterministic.
const std::string& stringsText() {
  static std::string* text = [] {
    std::mt19937_64 rng(11);
    const char* words[] = {"the",
                           "buffer",
                           "r\xc3\xa9seau",
                           "\xe6\x9d\xb1\xe4\xba\xac",
                           "protocol",
                           "\xf0\x9f\x98\x80",
                           "latency",
                           "zero-copy",
                           "\xd0\xbc\xd0\xb8\xd1\x80",
                           "pipeline",
                           "handler",
                           "event"};
    auto* out = new std::string("[");
    std::string& o = *out;
    for (int i = 0; i < 2000; ++i) {
      if (i) o += ',';
      o += "{\"from\":\"user" + std::to_string(i % 97) + "@example.com\",\"subject\":";
      std::string body;
      const std::size_t len = 200 + rng() % 600;
      while (body.size() < len) {
        if (!body.empty()) body += ' ';
        body += words[rng() % std::size(words)];
      }
      std::string subject = "re:";
      for (int w = 0; w < 4; ++w) (subject += ' ') += words[rng() % std::size(words)];
      appendEscaped(o, subject);
      o += ",\"body\":";
      appendEscaped(o, body);
      if (i % 8 == 0) {
        o.pop_back();  // the closing quote: add escapes of every kind first
        o += R"( \u00e9 \ud83d\ude00 \"end\"\n\t")";
      }
      o += '}';
    }
    o += ']';
    return out;
  }();
  return *text;
}

/// Small documents, where a parse's fixed costs show: a JSON-RPC request (84 bytes), the twitter
/// document's first status (~1.9 KB, written compactly by netbuf) and the first 20 points of the
/// numbers document (~830 bytes).
const std::string& rpcText() {
  static const std::string text =
      R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":1})";
  return text;
}
const std::string& statusText() {
  static const std::string text = [] {
    Document doc;
    json::parse(twitterText(), doc);
    ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(4096);
    json::write(doc.root()["statuses"].asArray()[0], buf);
    return std::string(buf.readableStringView());
  }();
  return text;
}
const std::string& coordsText() {
  static const std::string text = [] {
    const std::string& all = numbersText();
    std::size_t at = all.find('[');  // the coordinates' array
    for (int i = 0; i < 20; ++i) at = all.find(']', at + 1);
    return all.substr(0, at + 1) + "]}";
  }();
  return text;
}

/// The parse documents, by benchmark argument.
const std::string& parseText(std::int64_t which) {
  switch (which) {
    case 0:
      return twitterText();
    case 1:
      return numbersText();
    case 2:
      return stringsText();
    case 3:
      return rpcText();
    case 4:
      return statusText();
    default:
      return coordsText();
  }
}
const char* kParseDocs[] = {"twitter", "numbers", "strings", "rpc", "status", "coords"};
constexpr int kLargeParseDocs = 3;  // the first three; the rest are small

void BM_Parse_Netbuf(benchmark::State& state, int which) {
  const std::string& text = parseText(which);
  Document doc;
  for (auto _ : state) {
    doc.clear();
    json::parse(text, doc);
    benchmark::DoNotOptimize(doc.root());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
  state.counters["doc_bytes"] = static_cast<double>(text.size());
}

/// One engine of JsonParser: ByteAtATime, or Indexed (a structural index 64 bytes at a time, then
/// a walk over it) with the instruction-set tier stage 1 (and UTF-8 validation) uses, clamped to
/// what the CPU has.
void BM_Parse_NetbufEngine(benchmark::State& state, int which, JsonParser::Engine engine,
                           utf8::Isa isa) {
  const std::string& text = parseText(which);
  utf8::forceIsa(isa);
  state.SetLabel(utf8::isaName(utf8::activeIsa()));
  JsonParser parser;
  parser.setEngine(engine);
  Document doc;
  for (auto _ : state) {
    doc.clear();
    parser.parse(text, doc);
    benchmark::DoNotOptimize(doc.root());
  }
  utf8::resetIsa();
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

void BM_Parse_Simdjson(benchmark::State& state, int which) {
  // simdjson's documented use: one parser reused (its DOM lives in the parser) and padded input,
  // prepared once.
  const simdjson::padded_string text(parseText(which));
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::dom::element root;
    if (parser.parse(text).get(root) != simdjson::SUCCESS) die("simdjson parse");
    benchmark::DoNotOptimize(root);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

void BM_Parse_RapidJson(benchmark::State& state, int which) {
  const std::string& text = parseText(which);
  for (auto _ : state) {
    rapidjson::Document d;
    d.Parse(text.data(), text.size());
    if (d.HasParseError()) die("rapidjson parse");
    benchmark::DoNotOptimize(d);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

void BM_Parse_Nlohmann(benchmark::State& state, int which) {
  const std::string& text = parseText(which);
  for (auto _ : state) {
    nlohmann::json j = nlohmann::json::parse(text);
    benchmark::DoNotOptimize(j);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

// Named <doc>/parse/<library>; the libraries of one document run one after the other.
const int kParseRegistered = [] {
  for (int d = 0; d < static_cast<int>(std::size(kParseDocs)); ++d) {
    const std::string doc = kParseDocs[d];
    auto add = [&](const char* library, auto fn, auto... args) {
      benchmark::RegisterBenchmark((doc + "/parse/" + library).c_str(),
                                   [=](benchmark::State& st) { fn(st, d, args...); });
    };
    add("netbuf", BM_Parse_Netbuf);
    add("netbuf_byte", BM_Parse_NetbufEngine, JsonParser::Engine::ByteAtATime, utf8::Isa::Avx512);
    add("netbuf_indexed", BM_Parse_NetbufEngine, JsonParser::Engine::Indexed, utf8::Isa::Avx512);
    if (d < kLargeParseDocs) {
      add("netbuf_indexed_avx2", BM_Parse_NetbufEngine, JsonParser::Engine::Indexed,
          utf8::Isa::Avx2);
    }
    add("simdjson_dom", BM_Parse_Simdjson);
    add("rapidjson_dom", BM_Parse_RapidJson);
    if (d < kLargeParseDocs) add("nlohmann", BM_Parse_Nlohmann);
  }
  return 0;
}();

void BM_TwitterWrite_Netbuf(benchmark::State& state) {
  const std::string& text = twitterText();
  Document doc;
  json::parse(text, doc);
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(text.size() + 4096);
  for (auto _ : state) {
    buf.clear();
    json::write(doc.root(), buf);
    benchmark::DoNotOptimize(buf.readPtr());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(buf.readableBytes()));
}
BENCHMARK(BM_TwitterWrite_Netbuf)->Name("twitter/write/netbuf");

void BM_TwitterWrite_RapidJson(benchmark::State& state) {
  const std::string& text = twitterText();
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  rapidjson::StringBuffer sb;
  for (auto _ : state) {
    sb.Clear();
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    d.Accept(w);
    benchmark::DoNotOptimize(sb.GetString());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(sb.GetSize()));
}
BENCHMARK(BM_TwitterWrite_RapidJson)->Name("twitter/write/rapidjson");

void BM_TwitterWrite_Nlohmann(benchmark::State& state) {
  const nlohmann::json j = nlohmann::json::parse(twitterText());
  std::string out;
  for (auto _ : state) {
    out = j.dump();
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(out.size()));
}
BENCHMARK(BM_TwitterWrite_Nlohmann)->Name("twitter/write/nlohmann");

/// The three libraries agree on the document: netbuf's and RapidJSON's compact output (both keep
/// member order) are byte-identical.
void sanity() {
  const std::string& text = twitterText();
  Document doc;
  json::parse(text, doc);
  ByteBuf buf = ByteBufAllocator::defaultAllocator().buffer(text.size());
  json::write(doc.root(), buf);
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  if (buf.readableStringView() != std::string_view(sb.GetString(), sb.GetSize())) {
    die("netbuf and rapidjson serialise the twitter document differently");
  }
  const nlohmann::json j = nlohmann::json::parse(text);
  if (!j.contains("statuses")) die("nlohmann parse");

  // The strings document: netbuf and RapidJSON agree byte for byte, as above.
  {
    Document sdoc;
    json::parse(stringsText(), sdoc);
    ByteBuf sbuf = ByteBufAllocator::defaultAllocator().buffer(stringsText().size());
    json::write(sdoc.root(), sbuf);
    rapidjson::Document sd;
    sd.Parse(stringsText().data(), stringsText().size());
    rapidjson::StringBuffer ssb;
    rapidjson::Writer<rapidjson::StringBuffer> sw(ssb);
    sd.Accept(sw);
    if (sbuf.readableStringView() != std::string_view(ssb.GetString(), ssb.GetSize())) {
      die("netbuf and rapidjson serialise the strings document differently");
    }
  }
  // The numbers document: netbuf and simdjson (both correctly rounded) read every number alike.
  Document ndoc;
  json::parse(numbersText(), ndoc);
  simdjson::dom::parser sp;
  const simdjson::padded_string padded(numbersText());
  simdjson::dom::element root;
  if (sp.parse(padded).get(root) != simdjson::SUCCESS) die("simdjson parse");
  simdjson::dom::array coords = root["coordinates"].get_array();
  std::size_t i = 0;
  for (simdjson::dom::element pt : coords) {
    const Value& mine = ndoc.root()["coordinates"][i++];
    for (std::size_t k = 0; k < 2; ++k) {
      if (mine[k].asDouble() != double(pt.at(k).get_double())) die("numbers differ");
    }
  }
  if (i != ndoc.root()["coordinates"].size()) die("numbers: coordinate count");
}

}  // namespace

int main(int argc, char** argv) {
  // --dump-documents=DIR writes the parse documents there (for other tools), and exits.
  if (argc == 2 && std::string_view(argv[1]).starts_with("--dump-documents=")) {
    const std::string dir(std::string_view(argv[1]).substr(17));
    for (int d = 0; d < static_cast<int>(std::size(kParseDocs)); ++d) {
      const std::string path = dir + "/" + kParseDocs[d] + ".json";
      std::FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr) die("cannot write the documents");
      std::fwrite(parseText(d).data(), 1, parseText(d).size(), f);
      std::fclose(f);
    }
    return 0;
  }
  sanity();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

#pragma once
// The Redis decoders' transcript, shared by the codec tests and the fuzz targets: what a
// RedisRequestDecoder or RedisReplyDecoder emitted, one string per command, reply or error, in a
// form that does not depend on how the input was split into reads.
//
//   a command:  SET "k" "v"            (its arguments quoted and escaped; "inline " before an
//                                       inline one; the name is quoted too)
//   a reply:    *[:1, $"a", %{+k: #t}] (see describeResp below)
//   an error:   !InvalidBulkLength@12=600/512 (RedisProtocolErrc name, offset, value/limit as
//                                       errorLine in decoder_transcript.hpp prints them)
//
// No doctest here: the fuzz targets include this header too.

#include <netbuf/codec/decoder_runner.hpp>
#include <netbuf/codec/redis/redis_command.hpp>
#include <netbuf/codec/redis/redis_protocol_error.hpp>
#include <netbuf/codec/redis/redis_reply.hpp>
#include <netbuf/codec/redis/resp_value.hpp>

#include <fmt/format.h>

#include <cmath>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "support/decoder_transcript.hpp"

namespace netbuf::test {

inline const char* redisErrcName(RedisProtocolErrc k) {
  switch (k) {
    case RedisProtocolErrc::TooBigInlineRequest:
      return "TooBigInlineRequest";
    case RedisProtocolErrc::UnbalancedQuotes:
      return "UnbalancedQuotes";
    case RedisProtocolErrc::TooBigMultibulkCount:
      return "TooBigMultibulkCount";
    case RedisProtocolErrc::InvalidMultibulkLength:
      return "InvalidMultibulkLength";
    case RedisProtocolErrc::TooBigBulkCount:
      return "TooBigBulkCount";
    case RedisProtocolErrc::ExpectedDollar:
      return "ExpectedDollar";
    case RedisProtocolErrc::InvalidBulkLength:
      return "InvalidBulkLength";
    case RedisProtocolErrc::MessageTooLarge:
      return "MessageTooLarge";
    case RedisProtocolErrc::InlineNotAllowed:
      return "InlineNotAllowed";
    case RedisProtocolErrc::UnknownType:
      return "UnknownType";
    case RedisProtocolErrc::InvalidInteger:
      return "InvalidInteger";
    case RedisProtocolErrc::InvalidDouble:
      return "InvalidDouble";
    case RedisProtocolErrc::InvalidBoolean:
      return "InvalidBoolean";
    case RedisProtocolErrc::InvalidBigNumber:
      return "InvalidBigNumber";
    case RedisProtocolErrc::InvalidVerbatim:
      return "InvalidVerbatim";
    case RedisProtocolErrc::MissingCrlf:
      return "MissingCrlf";
    case RedisProtocolErrc::NestingTooDeep:
      return "NestingTooDeep";
    case RedisProtocolErrc::InvalidStreamChunk:
      return "InvalidStreamChunk";
    case RedisProtocolErrc::InvalidAttribute:
      return "InvalidAttribute";
    case RedisProtocolErrc::Truncated:
      return "Truncated";
  }
  return "?";
}

/// The transcript line of an error: a RedisProtocolError by its kind, anything else as
/// decoder_transcript.hpp describes it.
inline std::string redisError(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const RedisProtocolError& x) {
    return errorLine(redisErrcName(x.kind()), x.offset(), x.value(), x.limit());
  } catch (const std::exception& x) {
    return describeError(x);
  } catch (...) {
    return "!other:not a std::exception";
  }
}

/// Bytes quoted, with anything but printable ASCII (and '"', '\') escaped.
inline std::string quoted(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (u >= 0x20 && u < 0x7f) {
      r += c;
    } else {
      r += fmt::format("\\x{:02x}", u);
    }
  }
  return r + "\"";
}

inline std::string describeCommand(const RedisCommand& c) {
  std::string s = c.isInline() ? "inline" : "";
  for (std::string_view a : c.args()) {
    if (!s.empty()) s += ' ';
    s += quoted(a);
  }
  return s;
}

/// A RESP value: +simple -error :int $"bulk" !"bulk error" ,double #t/#f (big =verbatim
/// _ / $-1 / *-1 for the null forms, *[..] ~[..] >[..] %{k: v, ..}; "|{k: v} " before a value
/// with attributes.
inline std::string describeResp(const RespValue& v) {
  std::string s;
  // (fmt rather than "literal" + std::string: g++ 12 -Wrestrict false positives)
  if (const RespValue* a = v.attributes()) s = fmt::format("|{} ", describeResp(*a).substr(1));
  auto list = [&](const char* open, const char* close) {
    std::string r = open;
    const auto e = v.elements();
    for (std::size_t i = 0; i < e.size(); ++i) {
      if (i != 0) r += ", ";
      r += describeResp(e[i]);
    }
    return r + close;
  };
  switch (v.type()) {
    case RespType::SimpleString:
      return s + "+" + std::string(v.payload());
    case RespType::SimpleError:
      return s + "-" + std::string(v.payload());
    case RespType::Integer:
      return s + ":" + std::to_string(v.asInteger());
    case RespType::BulkString:
      return s + "$" + quoted(v.payload());
    case RespType::BulkError:
      return s + "!" + quoted(v.payload());
    case RespType::VerbatimString:
      return s + "=" + quoted(v.payload());
    case RespType::BigNumber:
      return s + "(" + std::string(v.payload());
    case RespType::Boolean:
      return s + (v.asBool() ? "#t" : "#f");
    case RespType::Double: {
      const double d = v.asDouble();
      if (std::isnan(d)) return s + ",nan";
      return s + fmt::format(",{}", d);
    }
    case RespType::Null:
      return s + (v.nullForm() == '$' ? "$-1" : v.nullForm() == '*' ? "*-1" : "_");
    case RespType::Array:
      return s + list("*[", "]");
    case RespType::Set:
      return s + list("~[", "]");
    case RespType::Push:
      return s + list(">[", "]");
    case RespType::Map: {
      std::string r = s + "%{";
      const auto e = v.elements();
      for (std::size_t i = 0; i + 1 < e.size(); i += 2) {
        if (i != 0) r += ", ";
        r += describeResp(e[i]) + ": " + describeResp(e[i + 1]);
      }
      return r + "}";
    }
  }
  return s + "?";
}

/// What a DecoderRunner of a Redis decoder recorded: messages, each error before the message that
/// followed it.
template <class Runner>
Transcript redisTranscriptOf(Runner& run) {
  Transcript t;
  std::size_t e = 0;
  const auto& msgs = run.messages();
  for (std::size_t i = 0; i <= msgs.size(); ++i) {
    while (e < run.errors().size() && run.errors()[e].messagesBefore == i)
      t.push_back(redisError(run.errors()[e++].error));
    if (i < msgs.size()) {
      if constexpr (requires { msgs[i].root(); }) {
        t.push_back(describeResp(msgs[i].root()));
      } else {
        t.push_back(describeCommand(msgs[i]));
      }
    }
  }
  return t;
}

}  // namespace netbuf::test

#pragma once
// The decoder transcript shared by the codec tests and the fuzz targets: what a decoder emitted,
// frames and errors in stream order, as one string per item, so that two runs (two cumulators, two
// ways of splitting the input, a decoder and its model) compare with ==.
//
//   a frame or message:  its bytes ("abc"), or its Document's root as Value::toDebugString prints
//   it an error:            "!Kind@offset[:line:column][=value/limit]"
//
// Kind is TooLong or Corrupted for TooLongFrameError and CorruptedFrameError, the code name for a
// MessagePackError ("StrLengthLimit"), "Json" and the code name for a JsonError ("JsonSyntax", with
// its line and column), and the class name for any other CodecError ("DecoderError").
// "=value/limit" is left out when neither applies; one that does not is printed as '-'. Any other
// exception is
// "!other:" and its what(). No doctest here: the fuzz targets include this header too.

#include <netbuf/buffer/any_byte_buf.hpp>
#include <netbuf/codec/codec_errors.hpp>
#include <netbuf/codec/document.hpp>
#include <netbuf/codec/json/json_parser.hpp>
#include <netbuf/codec/msgpack/message_pack_error.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace netbuf::test {

/// What a decoder produced, in stream order (see the format above).
using Transcript = std::vector<std::string>;

/// An error's transcript line from its fields: errorLine("TooLong", 12, 70000, 65536) is
/// "!TooLong@12=70000/65536", errorLine("Corrupted", 27) is "!Corrupted@27". Models in the fuzz
/// targets build their expected lines with it.
inline std::string errorLine(std::string_view kind, std::uint64_t offset,
                             std::uint64_t value = CodecError::kNone,
                             std::uint64_t limit = CodecError::kNone) {
  auto num = [](std::uint64_t v) {
    return v == CodecError::kNone ? std::string("-") : std::to_string(v);
  };
  std::string s = fmt::format("!{}@{}", kind, num(offset));
  if (value != CodecError::kNone || limit != CodecError::kNone)
    s += fmt::format("={}/{}", num(value), num(limit));
  return s;
}

/// The transcript line of an exception.
inline std::string describeError(const std::exception& e) {
  if (const auto* x = dynamic_cast<const JsonError*>(&e)) {
    std::string s = errorLine(fmt::format("Json{}", jsonErrorCodeName(x->code())), x->offset(),
                              x->value(), x->limit());
    // The position goes between the offset and the quantities.
    const std::size_t at = s.find('=');
    const std::string position = fmt::format(":{}:{}", x->line(), x->column());
    return at == std::string::npos ? s + position : s.insert(at, position);
  }
  if (const auto* x = dynamic_cast<const MessagePackError*>(&e))
    return errorLine(messagePackErrcName(x->code()), x->offset(), x->value(), x->limit());
  const char* kind = nullptr;
  if (dynamic_cast<const TooLongFrameError*>(&e) != nullptr) {
    kind = "TooLong";
  } else if (dynamic_cast<const CorruptedFrameError*>(&e) != nullptr) {
    kind = "Corrupted";
  } else if (dynamic_cast<const DecoderError*>(&e) != nullptr) {
    kind = "DecoderError";
  } else if (dynamic_cast<const EncoderError*>(&e) != nullptr) {
    kind = "EncoderError";
  } else if (dynamic_cast<const CodecError*>(&e) != nullptr) {
    kind = "CodecError";
  }
  if (kind == nullptr) return fmt::format("!other:{}", e.what());
  const auto& x = dynamic_cast<const CodecError&>(e);
  return errorLine(kind, x.offset(), x.value(), x.limit());
}

/// The transcript line of a recorded error (DecoderRunner::errors()).
inline std::string describeError(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return describeError(x);
  } catch (...) {
    return "!other:not a std::exception";
  }
}

/// The transcript line of a message: a buffer's readable bytes, a Document's root as
/// Value::toDebugString prints it, or the string itself.
struct DescribeMessage {
  template <class T>
  std::string operator()(const T& m) const {
    if constexpr (std::is_same_v<T, Document>) {
      return m.root().toDebugString();
    } else if constexpr (requires { readableBytesToString(m); }) {
      return readableBytesToString(m);
    } else {
      return std::string(m);
    }
  }
};

/// The transcript of what a DecoderRunner recorded: its messages, each error placed before the
/// message that followed it. describe renders a message (JSON tests print compact JSON instead).
template <class Runner, class Describe = DescribeMessage>
Transcript transcriptOf(Runner& run, Describe describe = {}) {
  Transcript t;
  std::size_t e = 0;
  const auto& msgs = run.messages();
  for (std::size_t i = 0; i <= msgs.size(); ++i) {
    while (e < run.errors().size() && run.errors()[e].messagesBefore == i)
      t.push_back(describeError(run.errors()[e++].error));
    if (i < msgs.size()) t.push_back(describe(msgs[i]));
  }
  return t;
}

/// The error value of a transcript line ("!TooLong@0=70000/16" gives 70000); nullopt for a message,
/// a line without quantities, or a value of '-'.
inline std::optional<std::uint64_t> errorValue(std::string_view line) {
  if (line.empty() || line[0] != '!') return std::nullopt;
  const std::size_t eq = line.find('=');
  const std::size_t slash = line.find('/', eq);
  if (eq == std::string_view::npos || slash == std::string_view::npos) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(line.data() + eq + 1, line.data() + slash, v);
  if (ec != std::errc() || end != line.data() + slash) return std::nullopt;
  return v;
}

/// A failFast error's value is the part of the frame seen when the error fired, which depends on
/// how the input was split: masks it ("!TooLong@0=*/16") so that the rest can be compared.
inline Transcript maskErrorValues(Transcript t) {
  for (std::string& s : t) {
    if (s.empty() || s[0] != '!') continue;
    const auto eq = s.find('=');
    const auto slash = s.find('/', eq);
    if (eq != std::string::npos && slash != std::string::npos)
      s = s.substr(0, eq + 1) + "*" + s.substr(slash);  // (not replace(): g++ 12 -Wrestrict)
  }
  return t;
}

/// A transcript on one line, each item quoted and escaped: {"abc", "!TooLong@0=9/4"}.
inline std::string toString(const Transcript& t) {
  std::string s = "{";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i != 0) s += ", ";
    s += fmt::format("{:?}", t[i]);
  }
  return s + "}";
}

}  // namespace netbuf::test

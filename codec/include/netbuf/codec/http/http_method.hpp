#pragma once
// HttpMethod: a request method (RFC 9110 §9), Netty's HttpMethod. The nine registered methods are
// constants with a small id, so comparisons and switches cost no string compare; any other token is
// an extension method carried by name.
//
// Ownership: name() of a constant is static. An extension method decoded from a request views the
// request's own storage (HttpHeaders' text): keep the request alive while the method is used, or
// copy the name.

#include <cstdint>
#include <string_view>

namespace netbuf {

class HttpMethod {
 public:
  enum class Id : std::uint8_t {
    Get,
    Head,
    Post,
    Put,
    Delete,
    Connect,
    Options,
    Trace,
    Patch,
    Other
  };

  constexpr HttpMethod() noexcept : HttpMethod(Id::Get, "GET") {}
  constexpr HttpMethod(Id id, std::string_view name) noexcept : name_(name), id_(id) {}

  static const HttpMethod GET;
  static const HttpMethod HEAD;
  static const HttpMethod POST;
  static const HttpMethod PUT;
  static const HttpMethod DELETE;
  static const HttpMethod CONNECT;
  static const HttpMethod OPTIONS;
  static const HttpMethod TRACE;
  static const HttpMethod PATCH;

  /// The constant of that name (methods are case-sensitive: "get" is an extension method), or an
  /// extension method viewing `name`. Does not validate the token (the decoder does).
  static constexpr HttpMethod valueOf(std::string_view name) noexcept;
  /// The constant of a registered id (Id::Other: GET).
  static constexpr HttpMethod of(Id id) noexcept;

  constexpr Id id() const noexcept { return id_; }
  constexpr std::string_view name() const noexcept { return name_; }
  constexpr bool isExtension() const noexcept { return id_ == Id::Other; }

  friend constexpr bool operator==(const HttpMethod& a, const HttpMethod& b) noexcept {
    return a.id_ == b.id_ && (a.id_ != Id::Other || a.name_ == b.name_);
  }

 private:
  std::string_view name_;
  Id id_;
};

inline constexpr HttpMethod HttpMethod::GET{Id::Get, "GET"};
inline constexpr HttpMethod HttpMethod::HEAD{Id::Head, "HEAD"};
inline constexpr HttpMethod HttpMethod::POST{Id::Post, "POST"};
inline constexpr HttpMethod HttpMethod::PUT{Id::Put, "PUT"};
inline constexpr HttpMethod HttpMethod::DELETE{Id::Delete, "DELETE"};
inline constexpr HttpMethod HttpMethod::CONNECT{Id::Connect, "CONNECT"};
inline constexpr HttpMethod HttpMethod::OPTIONS{Id::Options, "OPTIONS"};
inline constexpr HttpMethod HttpMethod::TRACE{Id::Trace, "TRACE"};
inline constexpr HttpMethod HttpMethod::PATCH{Id::Patch, "PATCH"};

constexpr HttpMethod HttpMethod::of(Id id) noexcept {
  switch (id) {
    case Id::Head:
      return HEAD;
    case Id::Post:
      return POST;
    case Id::Put:
      return PUT;
    case Id::Delete:
      return DELETE;
    case Id::Connect:
      return CONNECT;
    case Id::Options:
      return OPTIONS;
    case Id::Trace:
      return TRACE;
    case Id::Patch:
      return PATCH;
    default:
      return GET;
  }
}

constexpr HttpMethod HttpMethod::valueOf(std::string_view name) noexcept {
  // Dispatch on length and first byte: one compare for the common methods.
  switch (name.size()) {
    case 3:
      if (name == "GET") return GET;
      if (name == "PUT") return PUT;
      break;
    case 4:
      if (name == "POST") return POST;
      if (name == "HEAD") return HEAD;
      break;
    case 5:
      if (name == "PATCH") return PATCH;
      if (name == "TRACE") return TRACE;
      break;
    case 6:
      if (name == "DELETE") return DELETE;
      break;
    case 7:
      if (name == "OPTIONS") return OPTIONS;
      if (name == "CONNECT") return CONNECT;
      break;
    default:
      break;
  }
  return HttpMethod(Id::Other, name);
}

}  // namespace netbuf

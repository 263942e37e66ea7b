// HttpHeaders (http_headers.hpp) and the http_util helpers.

#include <algorithm>
#include <cstring>
#include <functional>
#include <netbuf/buffer/illegal_argument_error.hpp>
#include <netbuf/codec/http/detail/http_scan.hpp>
#include <netbuf/codec/http/http_headers.hpp>
#include <string>

namespace netbuf {

namespace http_util {

namespace {
inline char lower(char c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + ('a' - 'A')) : c;
}
}  // namespace

bool equalsIgnoreCase(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && lower(a[i]) != lower(b[i])) return false;
  return true;
}

bool isToken(std::string_view name) noexcept {
  if (name.empty()) return false;
  for (const char c : name)
    if (!detail::http_scan::kTchar[static_cast<unsigned char>(c)]) return false;
  return true;
}

bool isValidFieldValue(std::string_view value) noexcept {
  return detail::http_scan::findInvalidValueByte(value.data(), value.size()) == value.size();
}

}  // namespace http_util

namespace {

std::string_view trimOws(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

HttpHeaders HttpHeaders::copy() const {
  HttpHeaders c;
  if (backing_.isReadable()) c.backing_ = backing_.retainedDuplicate();
  if (owned_) c.owned_ = std::make_unique<std::string>(*owned_);
  if (size_ > 0) {
    c.entries_ = std::make_unique<Entry[]>(size_);
    std::copy_n(entries_.get(), size_, c.entries_.get());
    c.size_ = c.capacity_ = size_;
  }
  return c;
}

std::optional<std::string_view> HttpHeaders::get(std::string_view n) const noexcept {
  for (std::size_t i = 0; i < size_; ++i) {
    if (entries_[i].name.length == n.size() && http_util::equalsIgnoreCase(name(i), n))
      return value(i);
  }
  return std::nullopt;
}

std::vector<std::string_view> HttpHeaders::getAll(std::string_view n) const {
  std::vector<std::string_view> all;
  for (std::size_t i = 0; i < size_; ++i) {
    if (entries_[i].name.length == n.size() && http_util::equalsIgnoreCase(name(i), n))
      all.push_back(value(i));
  }
  return all;
}

std::size_t HttpHeaders::count(std::string_view n) const noexcept {
  std::size_t c = 0;
  for (std::size_t i = 0; i < size_; ++i) {
    if (entries_[i].name.length == n.size() && http_util::equalsIgnoreCase(name(i), n)) ++c;
  }
  return c;
}

bool HttpHeaders::containsValue(std::string_view n, std::string_view token) const noexcept {
  for (std::size_t i = 0; i < size_; ++i) {
    if (entries_[i].name.length != n.size() || !http_util::equalsIgnoreCase(name(i), n)) continue;
    std::string_view v = value(i);
    while (!v.empty()) {
      const std::size_t comma = v.find(',');
      if (http_util::equalsIgnoreCase(trimOws(v.substr(0, comma)), token)) return true;
      if (comma == std::string_view::npos) break;
      v.remove_prefix(comma + 1);
    }
  }
  return false;
}

std::optional<std::uint64_t> HttpHeaders::getUInt(std::string_view n) const noexcept {
  const auto v = get(n);
  if (!v || v->empty() || v->size() > 19) return std::nullopt;
  std::uint64_t r = 0;
  for (const char c : *v) {
    if (c < '0' || c > '9') return std::nullopt;
    r = r * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return r;
}

HttpHeaders::TextRef HttpHeaders::storeText(std::string_view text) {
  if (!owned_) owned_ = std::make_unique<std::string>();
  if (owned_->size() + text.size() >= TextRef::kOwnedBit) {
    throw IllegalArgumentError("HttpHeaders: more than 2 GiB of header text");
  }
  const auto at = static_cast<std::uint32_t>(owned_->size());
  owned_->append(text);
  return {at | TextRef::kOwnedBit, static_cast<std::uint32_t>(text.size())};
}

void HttpHeaders::grow() {
  const std::uint32_t cap = capacity_ == 0 ? 16 : capacity_ * 2;
  auto bigger = std::make_unique<Entry[]>(cap);
  std::copy_n(entries_.get(), size_, bigger.get());
  entries_ = std::move(bigger);
  capacity_ = cap;
}

void HttpHeaders::addUnchecked(std::string_view n, std::string_view v) {
  // n or v may view the owned store itself (h.add("b", *h.get("a"))): storing n may reallocate
  // the store and leave v dangling, so such text is copied out first.
  const auto inOwned = [this](std::string_view s) {
    return owned_ && !s.empty() && std::greater_equal<const char*>()(s.data(), owned_->data()) &&
           std::less<const char*>()(s.data(), owned_->data() + owned_->size());
  };
  if (inOwned(n) || inOwned(v)) {
    const std::string nc(n);
    const std::string vc(v);
    const TextRef nr = storeText(nc);
    addRef(nr, storeText(vc));
    return;
  }
  const TextRef nr = storeText(n);
  const TextRef vr = storeText(v);
  addRef(nr, vr);
}

HttpHeaders& HttpHeaders::add(std::string_view n, std::string_view v) {
  if (!http_util::isToken(n)) {
    throw IllegalArgumentError("HttpHeaders: field name \"" + std::string(n) + "\" is not a token");
  }
  if (!http_util::isValidFieldValue(v)) {
    throw IllegalArgumentError("HttpHeaders: the value of \"" + std::string(n) +
                               "\" holds a control character (CR, LF, NUL...)");
  }
  addUnchecked(n, trimOws(v));
  return *this;
}

HttpHeaders& HttpHeaders::add(std::string_view n, std::uint64_t v) {
  char digits[24];
  char* e = digits + sizeof digits;
  char* b = e;
  do {
    *--b = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  return add(n, std::string_view(b, static_cast<std::size_t>(e - b)));
}

HttpHeaders& HttpHeaders::set(std::string_view n, std::string_view v) {
  remove(n);
  return add(n, v);
}

HttpHeaders& HttpHeaders::set(std::string_view n, std::uint64_t v) {
  remove(n);
  return add(n, v);
}

std::size_t HttpHeaders::remove(std::string_view n) noexcept {
  std::uint32_t w = 0;
  for (std::uint32_t i = 0; i < size_; ++i) {
    if (entries_[i].name.length == n.size() && http_util::equalsIgnoreCase(name(i), n)) continue;
    entries_[w++] = entries_[i];
  }
  const std::size_t removed = size_ - w;
  size_ = w;
  return removed;
}

void HttpHeaders::clear() noexcept {
  size_ = 0;
  backing_ = ByteBuf();
  if (owned_) owned_->clear();
}

void HttpHeaders::foldLastValue(const char* unbacked, std::string_view continuation) {
  Entry& last = entries_[size_ - 1];
  const bool owned = (last.value.offset & TextRef::kOwnedBit) != 0;
  // The common case of several folds: the value is already the last text of the owned store, so
  // the continuation is appended in place (copying the whole value for each fold would make a
  // header of many folds cost quadratic time and memory).
  if (owned && (last.value.offset & ~TextRef::kOwnedBit) + last.value.length == owned_->size()) {
    if (owned_->size() + continuation.size() + 1 >= TextRef::kOwnedBit) {
      throw IllegalArgumentError("HttpHeaders: more than 2 GiB of header text");
    }
    if (last.value.length > 0 && !continuation.empty()) {
      owned_->push_back(' ');
      ++last.value.length;
    }
    owned_->append(continuation);
    last.value.length += static_cast<std::uint32_t>(continuation.size());
    return;
  }
  std::string joined;
  if (owned) {
    joined.assign(text(last.value));
  } else {
    joined.assign(unbacked + last.value.offset, last.value.length);
  }
  if (!joined.empty() && !continuation.empty()) joined.push_back(' ');
  joined.append(continuation);
  const TextRef stored = storeText(joined);
  entries_[size_ - 1].value = stored;
}

std::size_t HttpHeaders::encodedSize() const noexcept {
  std::size_t total = 0;
  for (std::size_t i = 0; i < size_; ++i)
    total += entries_[i].name.length + entries_[i].value.length + 4;  // ": " and CRLF
  return total;
}

char* HttpHeaders::encodeTo(char* dst) const noexcept {
  for (std::size_t i = 0; i < size_; ++i) {
    const std::string_view n = name(i);
    const std::string_view v = value(i);
    if (!n.empty()) std::memcpy(dst, n.data(), n.size());
    dst += n.size();
    dst[0] = ':';
    dst[1] = ' ';
    dst += 2;
    if (!v.empty()) std::memcpy(dst, v.data(), v.size());
    dst += v.size();
    dst[0] = '\r';
    dst[1] = '\n';
    dst += 2;
  }
  return dst;
}

}  // namespace netbuf

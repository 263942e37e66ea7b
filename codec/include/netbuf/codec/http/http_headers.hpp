#pragma once
// HttpHeaders: the header (or trailer) fields of one message, in order, with case-insensitive
// lookup and multi-value access (Netty's HttpHeaders).
//
// Storage, and why: a decoded message keeps its fields as views into a retained slice of the bytes
// it arrived in (backing()), so decoding allocates nothing per field. Each entry is four 32-bit
// offsets (name and value) into one of two stores:
//
//   backing ByteBuf  (read only: the head as received)     | GET / HTTP/1.1\r\nHost: a\r\n ... |
//   owned text       (a std::string: fields added by code) | x-ownvalue...                    |
//
// Fields added with add()/set() copy their text into the owned store (one growing string, so the
// offsets stay valid when it reallocates). name(i)/value(i) and the views that lookups return stay
// valid until the headers are modified or destroyed (moving keeps them: the stores move along).
//
// Validation: add()/set() refuse a name that is not an RFC 9110 token and a value with CR, LF, NUL
// or another control character other than HTAB (IllegalArgumentError), so no caller can split a
// response; decoded fields were validated by the decoder. Move-only (the backing is a handle);
// copy() makes an independent copy.
//
// Threading: none; a message belongs to one thread at a time.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <netbuf/buffer/byte_buf.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace netbuf {

namespace http_util {
/// ASCII case-insensitive equality (header names, tokens).
bool equalsIgnoreCase(std::string_view a, std::string_view b) noexcept;
/// Whether every byte of name is an RFC 9110 tchar and name is not empty.
bool isToken(std::string_view name) noexcept;
/// Whether value may be sent as a field value: no control character other than HTAB, no DEL.
bool isValidFieldValue(std::string_view value) noexcept;
}  // namespace http_util

class HttpHeaders {
 public:
  struct Field {
    std::string_view name;
    std::string_view value;
  };

  /// Where a piece of text lives: an offset into the backing slice, or (kOwnedBit set) into the
  /// owned store. Used by the decoder and by the message heads for their request line parts.
  struct TextRef {
    static constexpr std::uint32_t kOwnedBit = 0x8000'0000U;
    std::uint32_t offset = 0;
    std::uint32_t length = 0;
  };

  HttpHeaders() noexcept = default;
  /// A moved-from HttpHeaders is empty and usable.
  HttpHeaders(HttpHeaders&& o) noexcept
      : backing_(std::move(o.backing_)),
        entries_(std::move(o.entries_)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)),
        owned_(std::move(o.owned_)) {}
  HttpHeaders& operator=(HttpHeaders&& o) noexcept {
    if (this != &o) {
      backing_ = std::move(o.backing_);
      entries_ = std::move(o.entries_);
      size_ = std::exchange(o.size_, 0);
      capacity_ = std::exchange(o.capacity_, 0);
      owned_ = std::move(o.owned_);
    }
    return *this;
  }
  HttpHeaders(const HttpHeaders&) = delete;
  HttpHeaders& operator=(const HttpHeaders&) = delete;
  ~HttpHeaders() = default;

  /// An independent copy (the backing is shared read-only through a retained duplicate).
  HttpHeaders copy() const;

  // ---------------------------------------------------------------- reading
  std::size_t size() const noexcept { return size_; }
  bool isEmpty() const noexcept { return size_ == 0; }
  /// The i-th field's name and value in arrival order (i < size()).
  std::string_view name(std::size_t i) const noexcept { return text(entries_[i].name); }
  std::string_view value(std::size_t i) const noexcept { return text(entries_[i].value); }
  Field field(std::size_t i) const noexcept { return {name(i), value(i)}; }

  /// The first value of the field (names compare ignoring case), or nothing.
  std::optional<std::string_view> get(std::string_view name) const noexcept;
  /// The first value, or defaultValue.
  std::string_view get(std::string_view name, std::string_view defaultValue) const noexcept {
    auto v = get(name);
    return v ? *v : defaultValue;
  }
  /// Every value of the field, in order (one vector allocation).
  std::vector<std::string_view> getAll(std::string_view name) const;
  /// How many fields have this name.
  std::size_t count(std::string_view name) const noexcept;
  bool contains(std::string_view name) const noexcept { return get(name).has_value(); }
  /// Whether some field of this name holds `token` as one of its comma-separated elements
  /// (ignoring case and optional whitespace): contains("connection", "close").
  bool containsValue(std::string_view name, std::string_view token) const noexcept;
  /// The field's value as a non-negative decimal (digits only), or nothing when it is absent or
  /// malformed.
  std::optional<std::uint64_t> getUInt(std::string_view name) const noexcept;

  /// Calls fn(name, value) for every field in order.
  template <class Fn>
  void forEach(Fn&& fn) const {
    for (std::size_t i = 0; i < size_; ++i) fn(name(i), value(i));
  }

  // ---------------------------------------------------------------- writing
  /// Appends a field (copies both; see Validation). Returns *this.
  HttpHeaders& add(std::string_view name, std::string_view value);
  HttpHeaders& add(std::string_view name, std::uint64_t value);
  /// Removes every field of this name, then adds one.
  HttpHeaders& set(std::string_view name, std::string_view value);
  HttpHeaders& set(std::string_view name, std::uint64_t value);
  /// Removes every field of this name; returns how many.
  std::size_t remove(std::string_view name) noexcept;
  /// Removes every field (keeps the storage for reuse, drops the backing).
  void clear() noexcept;

  // ---------------------------------------------------------------- storage (decoder, heads)
  /// The text a TextRef names.
  std::string_view text(TextRef ref) const noexcept {
    const char* base = (ref.offset & TextRef::kOwnedBit) != 0
                           ? owned_->data() + (ref.offset & ~TextRef::kOwnedBit)
                           : reinterpret_cast<const char*>(backing_.readPtr()) + ref.offset;
    return {base, ref.length};
  }
  /// Copies text into the owned store.
  TextRef storeText(std::string_view text);
  /// The retained slice that backed fields view (empty when every field was added by code).
  const ByteBuf& backing() const noexcept { return backing_; }
  /// Sets the backing slice (the decoder, once a head is complete).
  void setBacking(ByteBuf backing) noexcept { backing_ = std::move(backing); }
  /// Appends a field whose text is already stored (no validation: the decoder validated it).
  void addRef(TextRef name, TextRef value) {
    if (size_ == capacity_) grow();
    entries_[size_++] = Entry{name, value};
  }
  /// obs-fold (decoder): the last field's value becomes "value SP continuation", stored owned.
  /// unbacked: the bytes that backing-relative offsets refer to while no backing is set yet.
  void foldLastValue(const char* unbacked, std::string_view continuation);
  /// Bytes of "name: value\r\n" lines for all fields (the encoder sizes its buffer with it).
  std::size_t encodedSize() const noexcept;
  /// Writes the "name: value\r\n" lines at dst (exactly encodedSize() bytes); returns the end.
  char* encodeTo(char* dst) const noexcept;

 private:
  struct Entry {
    TextRef name;
    TextRef value;
  };
  void grow();
  void addUnchecked(std::string_view name, std::string_view value);

  ByteBuf backing_;
  std::unique_ptr<Entry[]> entries_;
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = 0;
  std::unique_ptr<std::string> owned_;  // allocated at the first add(); see the header comment
};

}  // namespace netbuf

#pragma once
// Message: one message travelling through a channel pipeline, of any move-only type.
//
// A pipeline carries bytes (ByteBuf, CompositeByteBuf, AnyByteBuf) and, after the decoders, typed
// messages (frames, strings, user types). Message holds one value of any type, inline when it is
// small (up to kInlineSize bytes: every buffer type fits) and on the heap otherwise, and moves it
// along without copying it. Type queries are exact (is<T>() compares a per-type tag, no RTTI walk).
//
// Ownership: the Message owns its value; take<T>() moves it out and leaves the Message empty.
// Destroying a Message destroys its value (releasing buffers it holds): a message dropped anywhere
// is released, never leaked.

#include <cstddef>
#include <memory>
#include <netbuf/buffer/errors.hpp>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace netbuf {

/// A message of another type than the one asked for.
class MessageTypeError : public Error {
 public:
  using Error::Error;
};

/// A type's name as it is written in C++, for error messages: demangled, with the standard
/// library's ABI namespaces and defaulted template arguments dropped and its aliases restored
/// (`std::string`, `std::vector<int>`, `netbuf::AnyByteBuf`), e.g.
/// `std::map<std::string, std::vector<int>>`.
std::string typeName(const std::type_info& type);
/// The same rewriting of a demangled name (returned as is when it is not a shape it knows).
std::string readableTypeName(std::string_view demangled);

class Message {
 public:
  static constexpr std::size_t kInlineSize = 160;
  static constexpr std::size_t kInlineAlign = 16;

  Message() noexcept = default;
  template <class T, class D = std::decay_t<T>,
            std::enable_if_t<!std::is_same_v<D, Message>, int> = 0>
  explicit Message(T&& value) {
    static_assert(std::is_move_constructible_v<D>, "a message must be movable");
    if constexpr (fitsInline<D>()) {
      ::new (static_cast<void*>(storage_)) D(std::forward<T>(value));
    } else {
      heap() = new D(std::forward<T>(value));
    }
    ops_ = &opsFor<D>;
  }
  Message(Message&& o) noexcept { moveFrom(o); }
  Message& operator=(Message&& o) noexcept {
    if (this != &o) {
      reset();
      moveFrom(o);
    }
    return *this;
  }
  Message(const Message&) = delete;
  Message& operator=(const Message&) = delete;
  ~Message() { reset(); }

  bool empty() const noexcept { return ops_ == nullptr; }
  explicit operator bool() const noexcept { return ops_ != nullptr; }
  /// The held value's type (typeid(void) when empty).
  const std::type_info& type() const noexcept { return ops_ ? ops_->type() : typeid(void); }

  template <class T>
  bool is() const noexcept {
    return ops_ == &opsFor<T>;
  }
  /// The value, if it is a T; throws MessageTypeError naming both types otherwise.
  template <class T>
  T& as() {
    if (!is<T>()) wrongType(typeid(T));
    return *ptr<T>();
  }
  template <class T>
  const T& as() const {
    if (!is<T>()) wrongType(typeid(T));
    return *ptr<T>();
  }
  /// Moves the T out and leaves the message empty; throws MessageTypeError if it is not a T.
  template <class T>
  T take() {
    T v = std::move(as<T>());
    reset();
    return v;
  }
  /// Destroys the value (releasing what it holds).
  void reset() noexcept {
    if (ops_ != nullptr) {
      ops_->destroy(*this);
      ops_ = nullptr;
    }
  }

 private:
  struct Ops {
    void (*destroy)(Message&) noexcept;
    void (*move)(Message& to, Message& from) noexcept;  // from's value into to's storage
    const std::type_info& (*type)() noexcept;
  };

  template <class D>
  static constexpr bool fitsInline() {
    return sizeof(D) <= kInlineSize && alignof(D) <= kInlineAlign &&
           std::is_nothrow_move_constructible_v<D>;
  }
  template <class D>
  static void destroyImpl(Message& m) noexcept {
    if constexpr (fitsInline<D>()) {
      std::launder(reinterpret_cast<D*>(m.storage_))->~D();
    } else {
      delete static_cast<D*>(m.heap());
    }
  }
  template <class D>
  static void moveImpl(Message& to, Message& from) noexcept {
    if constexpr (fitsInline<D>()) {
      D* src = std::launder(reinterpret_cast<D*>(from.storage_));
      ::new (static_cast<void*>(to.storage_)) D(std::move(*src));
      src->~D();
    } else {
      to.heap() = std::exchange(from.heap(), nullptr);
    }
  }
  template <class D>
  static const std::type_info& typeImpl() noexcept {
    return typeid(D);
  }
  template <class D>
  static constexpr Ops opsFor{&destroyImpl<D>, &moveImpl<D>, &typeImpl<D>};

  template <class T>
  T* ptr() noexcept {
    if constexpr (fitsInline<T>()) {
      return std::launder(reinterpret_cast<T*>(storage_));
    } else {
      return static_cast<T*>(heap());
    }
  }
  template <class T>
  const T* ptr() const noexcept {
    return const_cast<Message*>(this)->ptr<T>();
  }
  void*& heap() noexcept { return heap_; }
  void moveFrom(Message& o) noexcept {
    if (o.ops_ != nullptr) {
      o.ops_->move(*this, o);
      ops_ = std::exchange(o.ops_, nullptr);
    }
  }
  [[noreturn]] void wrongType(const std::type_info& wanted) const;

  alignas(kInlineAlign) std::byte storage_[kInlineSize];
  void* heap_ = nullptr;  // the value, when it does not fit inline
  const Ops* ops_ = nullptr;
};

}  // namespace netbuf

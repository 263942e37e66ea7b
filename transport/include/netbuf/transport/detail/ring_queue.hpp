#pragma once
// RingQueue<T>: the FIFO of a channel's queued writes and of a ReceiveQueue's messages. A growable
// circular buffer that keeps its storage: once it has held N elements, pushing and popping up to N
// allocates nothing. (A std::deque frees and allocates a block every few elements as writes flow
// through it, a malloc on the write path at steady state.)
//
// Capacity is 0 or a power of two, doubling when full (elements are moved over, or copied as
// std::vector would); it never shrinks while the queue lives. Iteration runs front to back. Moving
// a queue moves its storage (the source is left empty, with none). Not thread-safe: a channel's
// queues belong to its loop.
#include <cstddef>
#include <iterator>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace netbuf::detail {

template <class T>
class RingQueue {
 public:
  RingQueue() noexcept = default;
  RingQueue(RingQueue&& o) noexcept
      : slots_(std::exchange(o.slots_, nullptr)),
        capacity_(std::exchange(o.capacity_, 0)),
        head_(std::exchange(o.head_, 0)),
        size_(std::exchange(o.size_, 0)) {}
  RingQueue& operator=(RingQueue&& o) noexcept {
    if (this != &o) {
      clear();
      release();
      slots_ = std::exchange(o.slots_, nullptr);
      capacity_ = std::exchange(o.capacity_, 0);
      head_ = std::exchange(o.head_, 0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  RingQueue(const RingQueue&) = delete;
  RingQueue& operator=(const RingQueue&) = delete;
  ~RingQueue() {
    clear();
    release();
  }

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }

  T& front() noexcept { return *at(0); }
  const T& front() const noexcept { return *at(0); }

  /// Appends v (moved or copied in). Grows (and may throw std::bad_alloc, the queue unchanged)
  /// only when full.
  template <class... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) grow();
    T* p = ::new (static_cast<void*>(at(size_))) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void push_back(const T& v) { emplace_back(v); }

  /// Destroys the front element. The queue must not be empty.
  void pop_front() noexcept {
    std::destroy_at(at(0));
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
  }

  /// Destroys every element, front to back; keeps the storage.
  void clear() noexcept {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

  template <bool Const>
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = T;
    using difference_type = std::ptrdiff_t;
    using pointer = std::conditional_t<Const, const T*, T*>;
    using reference = std::conditional_t<Const, const T&, T&>;

    Iterator() noexcept = default;
    reference operator*() const noexcept { return *q_->at(i_); }
    pointer operator->() const noexcept { return q_->at(i_); }
    Iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    Iterator operator++(int) noexcept {
      Iterator old = *this;
      ++i_;
      return old;
    }
    bool operator==(const Iterator& o) const noexcept { return i_ == o.i_; }

   private:
    friend class RingQueue;
    using Queue = std::conditional_t<Const, const RingQueue, RingQueue>;
    Iterator(Queue* q, std::size_t i) noexcept : q_(q), i_(i) {}
    Queue* q_ = nullptr;
    std::size_t i_ = 0;  // position from the front
  };
  using iterator = Iterator<false>;
  using const_iterator = Iterator<true>;

  iterator begin() noexcept { return iterator(this, 0); }
  iterator end() noexcept { return iterator(this, size_); }
  const_iterator begin() const noexcept { return const_iterator(this, 0); }
  const_iterator end() const noexcept { return const_iterator(this, size_); }

 private:
  static constexpr std::size_t kInitialCapacity = 16;

  /// The slot of the element i places from the front (i < capacity_).
  T* at(std::size_t i) const noexcept {
    return std::launder(reinterpret_cast<T*>(slots_ + ((head_ + i) & (capacity_ - 1)) * sizeof(T)));
  }

  void grow() {
    const std::size_t cap = capacity_ == 0 ? kInitialCapacity : capacity_ * 2;
    auto* fresh =
        static_cast<std::byte*>(::operator new(cap * sizeof(T), std::align_val_t(alignof(T))));
    std::size_t made = 0;
    try {
      // As std::vector grows: moved when the move cannot throw, else copied where T can be (the
      // queue is then unchanged if a copy throws).
      for (; made < size_; ++made) {
        ::new (static_cast<void*>(fresh + made * sizeof(T))) T(std::move_if_noexcept(*at(made)));
      }
    } catch (...) {
      for (std::size_t i = 0; i < made; ++i)
        std::destroy_at(reinterpret_cast<T*>(fresh + i * sizeof(T)));
      ::operator delete(fresh, std::align_val_t(alignof(T)));
      throw;
    }
    for (std::size_t i = 0; i < size_; ++i) std::destroy_at(at(i));
    release();
    slots_ = fresh;
    capacity_ = cap;
    head_ = 0;
  }
  void release() noexcept {
    if (slots_ != nullptr) ::operator delete(slots_, std::align_val_t(alignof(T)));
    slots_ = nullptr;
  }

  std::byte* slots_ = nullptr;  // capacity_ slots of sizeof(T) bytes, aligned for T
  std::size_t capacity_ = 0;    // 0 or a power of two
  std::size_t head_ = 0;        // slot of the front element
  std::size_t size_ = 0;
};

}  // namespace netbuf::detail

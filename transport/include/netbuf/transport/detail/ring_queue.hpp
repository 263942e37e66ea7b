#pragma once
// RingQueue<T>: the FIFO of a channel's queued writes and of a ReceiveQueue's messages. A growable
// circular buffer that keeps its storage: once it has held N elements, pushing and popping up to N
// allocates nothing (unless it drains empty from more than 256 slots, below). (A std::deque frees
// and allocates a block every few elements as writes flow through it, a malloc on the write path at
// steady state.)
//
// Capacity is 0 or a power of two, doubling when full (elements are moved over, or copied as
// std::vector would); a queue that drains empty keeps up to 256 slots and frees larger storage.
// Iteration runs front to back. Moving a queue moves its storage (the source is left empty, with
// none). Not thread-safe: a channel's queues belong to its loop.
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
    if (size_ == capacity_) [[unlikely]]
      return growAndEmplace(std::forward<Args>(args)...);
    T* p = ::new (slot(size_)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void push_back(const T& v) { emplace_back(v); }

  /// Room for n elements without allocating again (may throw std::bad_alloc, the queue
  /// unchanged).
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    std::size_t cap = capacity_ == 0 ? kInitialCapacity : capacity_;
    while (cap < n) cap *= 2;
    std::byte* fresh = allocateSlots(cap);
    try {
      moveInto(fresh, cap);
    } catch (...) {
      freeSlots(fresh);
      throw;
    }
  }

  /// Moves every element of from to the back of this queue, in order, and leaves from empty: all
  /// or nothing (may throw std::bad_alloc with both queues unchanged). Into an empty queue, the
  /// two swap storage and nothing is allocated or moved one by one.
  void appendFrom(RingQueue& from) {
    if (empty()) {
      std::swap(*this, from);
      return;
    }
    reserve(size_ + from.size_);
    for (T& v : from) emplace_back(std::move(v));
    from.clear();
  }

  /// Destroys the front element. The queue must not be empty. A queue that drains empty with
  /// more than kKeptCapacity slots gives its storage back (a burst does not pin its peak).
  void pop_front() noexcept {
    std::destroy_at(at(0));
    head_ = (head_ + 1) & (capacity_ - 1);
    if (--size_ == 0 && capacity_ > kKeptCapacity) {
      release();
      capacity_ = 0;
      head_ = 0;
    }
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
  /// Slots a queue keeps once drained (enough for ordinary pipelining; more is a burst).
  static constexpr std::size_t kKeptCapacity = 256;

  /// The raw slot of position i from the front (i < capacity_), for placement new.
  void* slot(std::size_t i) const noexcept {
    return slots_ + ((head_ + i) & (capacity_ - 1)) * sizeof(T);
  }
  /// The element at position i from the front (i < size_).
  T* at(std::size_t i) const noexcept { return std::launder(static_cast<T*>(slot(i))); }

  static std::byte* allocateSlots(std::size_t cap) {
    return static_cast<std::byte*>(::operator new(cap * sizeof(T), std::align_val_t(alignof(T))));
  }

  static void freeSlots(std::byte* p) noexcept {
    ::operator delete(p, std::align_val_t(alignof(T)));
  }

  /// Moves the elements to the front of fresh (cap slots, from allocateSlots) and adopts it. As
  /// std::vector grows: moved when the move cannot throw, else copied where T can be; if a copy
  /// throws, what was made in fresh is destroyed (the caller frees fresh) and the queue is
  /// unchanged.
  void moveInto(std::byte* fresh, std::size_t cap) {
    std::size_t made = 0;
    try {
      for (; made < size_; ++made) {
        ::new (static_cast<void*>(fresh + made * sizeof(T))) T(std::move_if_noexcept(*at(made)));
      }
    } catch (...) {
      for (std::size_t i = 0; i < made; ++i) {
        std::destroy_at(std::launder(reinterpret_cast<T*>(fresh + i * sizeof(T))));
      }
      throw;
    }
    for (std::size_t i = 0; i < size_; ++i) std::destroy_at(at(i));
    release();
    slots_ = fresh;
    capacity_ = cap;
    head_ = 0;
  }

  /// emplace_back on a full queue. The new element is made in the new storage before the old
  /// elements move, so that args may refer to one of them (push_back(q.front())).
  template <class... Args>
  T& growAndEmplace(Args&&... args) {
    const std::size_t cap = capacity_ == 0 ? kInitialCapacity : capacity_ * 2;
    std::byte* fresh = allocateSlots(cap);
    T* p = nullptr;
    try {
      p = ::new (static_cast<void*>(fresh + size_ * sizeof(T))) T(std::forward<Args>(args)...);
    } catch (...) {
      freeSlots(fresh);
      throw;
    }
    try {
      moveInto(fresh, cap);
    } catch (...) {
      std::destroy_at(p);
      freeSlots(fresh);
      throw;
    }
    ++size_;
    return *p;
  }

  void release() noexcept {
    if (slots_ != nullptr) freeSlots(slots_);
    slots_ = nullptr;
  }

  std::byte* slots_ = nullptr;  // capacity_ slots of sizeof(T) bytes, aligned for T
  std::size_t capacity_ = 0;    // 0 or a power of two
  std::size_t head_ = 0;        // slot of the front element
  std::size_t size_ = 0;
};

}  // namespace netbuf::detail

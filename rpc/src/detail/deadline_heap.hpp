#pragma once
// DeadlineHeap: the pending calls that have a timeout, as a binary min-heap on their deadlines.
// Each call records its position (RpcPendingCall::heapIndex), so a call answered before its
// deadline leaves the heap in O(log n) without a search. The vector is reused: no allocation per
// call once it has grown to the window of pending calls. Loop thread only.

#include <cstddef>
#include <netbuf/rpc/message_pack_rpc_client.hpp>
#include <utility>
#include <vector>

namespace netbuf::detail {

class DeadlineHeap {
 public:
  bool empty() const noexcept { return heap_.empty(); }
  std::size_t size() const noexcept { return heap_.size(); }
  /// The call with the earliest deadline (the heap must not be empty).
  RpcPendingCall* top() const noexcept { return heap_.front(); }

  void push(RpcPendingCall* call) {
    heap_.push_back(call);
    call->heapIndex = heap_.size() - 1;
    siftUp(heap_.size() - 1);
  }

  /// Removes call (which must be in the heap).
  void erase(RpcPendingCall* call) noexcept {
    const std::size_t i = call->heapIndex;
    call->heapIndex = SIZE_MAX;
    RpcPendingCall* last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;  // it was the last one
    place(i, last);
    siftDown(i);
    siftUp(last->heapIndex);
  }

  /// Forgets every call (their heapIndex is left for the caller to reset).
  void clear() noexcept { heap_.clear(); }

 private:
  static bool before(const RpcPendingCall* a, const RpcPendingCall* b) noexcept {
    return a->deadline < b->deadline;
  }
  void place(std::size_t i, RpcPendingCall* c) noexcept {
    heap_[i] = c;
    c->heapIndex = i;
  }
  void siftUp(std::size_t i) noexcept {
    RpcPendingCall* c = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(c, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, c);
  }
  void siftDown(std::size_t i) noexcept {
    RpcPendingCall* c = heap_[i];
    const std::size_t n = heap_.size();
    for (;;) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], c)) break;
      place(i, heap_[child]);
      i = child;
    }
    place(i, c);
  }

  std::vector<RpcPendingCall*> heap_;
};

}  // namespace netbuf::detail

// detail::RingQueue, the FIFO behind a channel's queued writes and a ReceiveQueue: order across
// wrap-around and growth, storage kept through clear(), moves, iteration, element lifetimes, and
// growth with a type whose move may throw (copied, as std::vector does).
#include <netbuf/transport/detail/ring_queue.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

using netbuf::detail::RingQueue;

namespace {

/// Counts live instances.
struct Counted {
  static inline int live = 0;
  int v;
  explicit Counted(int x) : v(x) { ++live; }
  Counted(Counted&& o) noexcept : v(o.v) { ++live; }
  Counted(const Counted&) = delete;
  ~Counted() { --live; }
};

/// Copyable, with a move that may throw: growth must copy it.
struct ThrowingMove {
  int v;
  static inline int copies = 0;
  explicit ThrowingMove(int x) : v(x) {}
  ThrowingMove(const ThrowingMove& o) : v(o.v) { ++copies; }
  ThrowingMove(ThrowingMove&& o) noexcept(false) : v(o.v) {}
};

std::vector<int> contents(const RingQueue<int>& q) {
  std::vector<int> out;
  for (int x : q) out.push_back(x);
  return out;
}

}  // namespace

TEST_CASE("RingQueue: first in, first out across wrap-around and growth") {
  RingQueue<int> q;
  CHECK(q.empty());
  CHECK(q.capacity() == 0);
  int next = 0;
  int expect = 0;
  // Interleave pushes and pops so that the head wraps before the queue grows.
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 3; ++i) q.push_back(next++);
    for (int i = 0; i < 2; ++i) {
      REQUIRE(q.front() == expect++);
      q.pop_front();
    }
  }
  CHECK(q.size() == 100);
  CHECK(q.capacity() == 128);
  std::vector<int> all = contents(q);
  REQUIRE(all.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(all[i] == expect + i);
  while (!q.empty()) {
    CHECK(q.front() == expect++);
    q.pop_front();
  }
  CHECK(expect == next);
}

TEST_CASE("RingQueue: storage kept through pops and clear (no allocation once grown)") {
  RingQueue<std::string> q;
  for (int i = 0; i < 16; ++i) q.emplace_back(std::to_string(i));
  CHECK(q.capacity() == 16);
  for (int i = 0; i < 1000; ++i) {
    q.pop_front();
    q.emplace_back("x");
  }
  CHECK(q.capacity() == 16);  // a full queue that never held more never grew
  q.clear();
  CHECK(q.empty());
  CHECK(q.capacity() == 16);
  q.emplace_back("after");
  CHECK(q.front() == "after");
}

TEST_CASE("RingQueue: elements destroyed once, by pop, clear, move-assignment and destruction") {
  {
    RingQueue<Counted> q;
    for (int i = 0; i < 40; ++i) q.emplace_back(i);  // grows twice, moving the elements over
    CHECK(Counted::live == 40);
    q.pop_front();
    CHECK(Counted::live == 39);
    CHECK(q.front().v == 1);

    RingQueue<Counted> other(std::move(q));
    CHECK(q.empty());  // NOLINT: moved-from is empty by contract
    CHECK(q.capacity() == 0);
    CHECK(other.size() == 39);
    CHECK(Counted::live == 39);

    RingQueue<Counted> third;
    third.emplace_back(100);
    third = std::move(other);  // third's own element destroyed
    CHECK(Counted::live == 39);
    CHECK(third.front().v == 1);
    third.clear();
    CHECK(Counted::live == 0);
    third.emplace_back(7);
    // q (moved from) is usable again.
    q.emplace_back(8);
    CHECK(q.front().v == 8);
    CHECK(Counted::live == 2);
  }
  CHECK(Counted::live == 0);
}

TEST_CASE("RingQueue: growth copies a type whose move may throw") {
  RingQueue<ThrowingMove> q;
  for (int i = 0; i < 17; ++i) q.emplace_back(i);  // the 17th grows 16 -> 32
  CHECK(ThrowingMove::copies == 16);
  int i = 0;
  for (const ThrowingMove& t : q) CHECK(t.v == i++);
  CHECK(i == 17);
}

TEST_CASE("RingQueue: iterators of a const queue, and after the head has wrapped") {
  RingQueue<int> q;
  for (int i = 0; i < 16; ++i) q.push_back(i);
  for (int i = 0; i < 10; ++i) q.pop_front();
  for (int i = 16; i < 24; ++i) q.push_back(i);  // wraps within the 16 slots
  CHECK(q.capacity() == 16);
  const RingQueue<int>& cq = q;
  std::vector<int> seen(cq.begin(), cq.end());
  std::vector<int> want;
  for (int i = 10; i < 24; ++i) want.push_back(i);
  CHECK(seen == want);
  auto it = q.begin();
  *it = 99;
  CHECK(q.front() == 99);
}

TEST_CASE("RingQueue: reserve, and a queue that drains empty from a burst gives its storage back") {
  RingQueue<int> q;
  q.reserve(100);
  CHECK(q.capacity() == 128);
  for (int i = 0; i < 100; ++i) q.push_back(i);
  CHECK(q.capacity() == 128);  // reserved: no growth
  while (!q.empty()) q.pop_front();
  CHECK(q.capacity() == 128);  // up to 256 slots are kept
  for (int i = 0; i < 1000; ++i) q.push_back(i);
  CHECK(q.capacity() == 1024);
  for (int i = 0; i < 999; ++i) q.pop_front();
  CHECK(q.capacity() == 1024);  // not empty yet
  CHECK(q.front() == 999);
  q.pop_front();
  CHECK(q.capacity() == 0);  // drained from a burst: freed
  q.push_back(5);
  CHECK(q.front() == 5);
  q.reserve(1);  // already room: nothing changes
  CHECK(q.capacity() == 16);
}

TEST_CASE("RingQueue: push_back of its own front while full (the new element made first)") {
  RingQueue<std::string> q;
  for (int i = 0; i < 16; ++i) q.emplace_back("element " + std::to_string(i));
  REQUIRE(q.size() == q.capacity());
  q.push_back(q.front());  // grows; the argument refers to an element about to move
  CHECK(q.size() == 17);
  std::vector<std::string> all(q.begin(), q.end());
  CHECK(all.back() == "element 0");
  CHECK(all.front() == "element 0");
}

namespace {
/// Copy throws on the n-th copy (a countdown), move may throw: growth copies.
struct FailingCopy {
  static inline int copiesLeft = -1;  // -1: never fails
  static inline int live = 0;
  int v;
  explicit FailingCopy(int x) : v(x) { ++live; }
  FailingCopy(const FailingCopy& o) : v(o.v) {
    if (copiesLeft == 0) throw std::runtime_error("copy");
    if (copiesLeft > 0) --copiesLeft;
    ++live;
  }
  FailingCopy(FailingCopy&& o) noexcept(false) : v(o.v) { ++live; }
  ~FailingCopy() { --live; }
};
}  // namespace

TEST_CASE("RingQueue: a copy that throws while growing leaves the queue as it was") {
  {
    RingQueue<FailingCopy> q;
    for (int i = 0; i < 16; ++i) q.emplace_back(i);
    q.pop_front();
    q.emplace_back(16);  // wrapped: head at slot 1
    REQUIRE(q.size() == 16);
    FailingCopy::copiesLeft = 5;
    CHECK_THROWS_AS(q.emplace_back(99), std::runtime_error);
    FailingCopy::copiesLeft = 3;
    CHECK_THROWS_AS(q.reserve(40), std::runtime_error);
    FailingCopy::copiesLeft = -1;
    CHECK(q.size() == 16);
    CHECK(q.capacity() == 16);
    CHECK(FailingCopy::live == 16);
    int expect = 1;
    for (const FailingCopy& f : q) CHECK(f.v == expect++);
    q.emplace_back(17);  // now it grows
    CHECK(q.size() == 17);
    CHECK(q.capacity() == 32);
  }
  CHECK(FailingCopy::live == 0);
}

TEST_CASE("RingQueue: appendFrom moves everything over in order, all or nothing") {
  RingQueue<int> to;
  RingQueue<int> from;
  for (int i = 0; i < 20; ++i) from.push_back(i);
  to.appendFrom(from);  // into an empty queue: the storage changes hands
  CHECK(from.empty());
  CHECK(to.size() == 20);
  CHECK(to.capacity() == 32);
  for (int i = 20; i < 40; ++i) from.push_back(i);
  to.appendFrom(from);
  CHECK(from.empty());
  std::vector<int> want;
  for (int i = 0; i < 40; ++i) want.push_back(i);
  CHECK(contents(to) == want);
  to.appendFrom(from);  // nothing to move
  CHECK(to.size() == 40);

  // A copy that throws while making room: both queues as they were.
  {
    RingQueue<FailingCopy> a;
    RingQueue<FailingCopy> b;
    for (int i = 0; i < 16; ++i) a.emplace_back(i);
    for (int i = 16; i < 20; ++i) b.emplace_back(i);
    FailingCopy::copiesLeft = 2;
    CHECK_THROWS_AS(a.appendFrom(b), std::runtime_error);
    FailingCopy::copiesLeft = -1;
    CHECK(a.size() == 16);
    CHECK(b.size() == 4);
    CHECK(b.front().v == 16);
    a.appendFrom(b);
    CHECK(a.size() == 20);
    CHECK(b.empty());
  }
  CHECK(FailingCopy::live == 0);
}

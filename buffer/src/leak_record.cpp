// PoolCore's leak tracking: a LeakRecord per tracked live buffer, recycled; at `simple` one
// backtrace per caller, shared.

#include "detail/pool_core.hpp"

#include "detail/intrusive_list.hpp"

#include <cxxabi.h>
#include <execinfo.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <new>

namespace netbuf::detail {

std::string symbolize(void* const* frames, int depth) {
  std::string out;
  char** symbols = backtrace_symbols(frames, depth);
  for (int i = 0; i < depth; ++i) {
    std::string line = symbols != nullptr ? symbols[i] : fmt::format("{}", frames[i]);
    // "module(mangled+0x1f) [0xaddr]": demangle the name when there is one.
    const auto open = line.find('(');
    const auto plus = line.find('+', open == std::string::npos ? 0 : open);
    if (open != std::string::npos && plus != std::string::npos && plus > open + 1) {
      const std::string mangled = line.substr(open + 1, plus - open - 1);
      int status = 0;
      char* demangled = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
      if (status == 0 && demangled != nullptr) line.replace(open + 1, mangled.size(), demangled);
      std::free(demangled);
    }
    out += fmt::format("    #{} {}\n", i, line);
  }
  std::free(static_cast<void*>(symbols));
  return out;
}

namespace {
constexpr std::size_t kMaxFreeRecords = 1024;

LeakTrace* captureTrace() noexcept {
  auto* t = new (std::nothrow) LeakTrace();
  if (t != nullptr) t->depth = backtrace(t->frames, kMaxFrames);
  return t;
}
}  // namespace

// What a sample costs is what makes `simple` cheap or not: glibc's backtrace() takes microseconds
// (about 0.5 us plus 0.15 us per frame), so at simple it runs once per caller, and a sample
// otherwise costs a lock, a hash lookup and a recycled record.
void PoolCore::track(PooledStorage* s, std::size_t requested, void* caller,
                     bool ownTrace) noexcept {
  LeakTrace* own = ownTrace ? captureTrace() : nullptr;
  std::unique_lock lock(leakMutex);
  const LeakTrace* trace = own;
  if (!ownTrace) {
    auto it = siteTraces.find(caller);
    if (it != siteTraces.end()) {
      trace = it->second.get();
    } else if (siteTraces.size() < kMaxLeakSites) {
      lock.unlock();  // the backtrace is slow: other threads' samples need not wait for it
      std::unique_ptr<LeakTrace> fresh(captureTrace());
      lock.lock();
      if (fresh != nullptr) {
        try {
          // Another thread may have added this caller meanwhile: its trace stays.
          trace = siteTraces.try_emplace(caller, std::move(fresh)).first->second.get();
        } catch (...) {  // out of memory: the record names its caller only
        }
      }
    }
  }
  LeakRecord* r = freeRecords;
  if (r != nullptr) {
    freeRecords = r->next;
    --freeRecordCount;
  } else {
    r = new (std::nothrow) LeakRecord();
    if (r == nullptr) {
      delete own;
      return;  // out of memory: this buffer goes untracked
    }
  }
  r->size = requested;
  r->caller = caller;
  r->trace = trace;
  r->ownsTrace = own != nullptr;
  r->sequence = ++leakSequence;
  listPush(leakHead, r);
  s->leak = r;
  s->state.store(kStateLiveSlow, std::memory_order_relaxed);
}

void PoolCore::untrack(PooledStorage* s) noexcept {
  LeakRecord* r = s->leak;
  const LeakTrace* own = r->ownsTrace ? r->trace : nullptr;
  {
    std::lock_guard lock(leakMutex);
    listRemove(leakHead, r);
    if (freeRecordCount < kMaxFreeRecords) {
      r->trace = nullptr;
      r->ownsTrace = false;
      r->next = freeRecords;
      freeRecords = r;
      ++freeRecordCount;
      r = nullptr;
    }
  }
  delete own;
  delete r;
  s->leak = nullptr;
}

}  // namespace netbuf::detail

// SPDX-License-Identifier: GPL-2.0-only
// core::UserMemory for unit tests: the caller is the test process itself, and its memory is
// copied in-process, no system call. What the daemon's process_vm_readv/writev
// (cused/host/process_vm.h) would answer EFAULT for is EFAULT here too, for the addresses these
// tests use, by rule and not by guess:
//   - the null page range [0, 64 KiB): below mmap_min_addr nothing is ever mapped;
//   - a range that wraps past the top of the address space;
//   - what the test declared unreachable (FakeAddressSpace::forbid): memory its caller has not
//     mapped, or has unmapped since.
// Any other address is the test's own memory, and must be: an address the test neither owns nor
// declared is dereferenced, and crashes the test loudly rather than passing it quietly.
// A fault copies the bytes before it, as the kernel copies what it reached, and stops there.
//
// The copy is the kernel's, so no sanitizer sees it, as none sees process_vm_readv/writev: the
// engine reads guessed memory (a thread's last payload, core/user_reader.h), which in a test is
// often a Parcel freed since; in the caller's process that is mapped memory the guess then
// discards, and TSan or ASan must not call it a use after free of the daemon.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "core/sync/lock_guard.h"
#include "core/sync/std_mutex.h"
#include "core/sync/thread_annotations.h"
#include "core/user_memory.h"

namespace cused::testing {

namespace detail {

// Byte by byte through volatile, so the compiler cannot turn it into a call of memcpy, which the
// sanitizers intercept whatever the attribute says.
__attribute__((noinline, no_sanitize("address", "thread"))) inline void unseen_copy(
    void* dst, const void* src, std::size_t len) {
  auto* to = static_cast<volatile unsigned char*>(dst);
  auto* from = static_cast<const volatile unsigned char*>(src);
  for (std::size_t i = 0; i < len; ++i) to[i] = from[i];
}

}  // namespace detail

// The test process's address space as its fake callers see it: everything reachable but the
// null page and the ranges the test forbids.
class FakeAddressSpace {
 public:
  // The kernel's vm.mmap_min_addr on the common distributions: no mapping starts below it.
  static constexpr std::uint64_t kNullPagesEnd = 64 * 1024;

  // From now on [addr, addr + len) faults, as an unmapped or PROT_NONE page would.
  void forbid(const void* addr, std::size_t len) {
    const auto start = reinterpret_cast<std::uint64_t>(addr);
    sync::LockGuard guard(lock_);
    forbidden_.emplace_back(start, start + len);
  }

  // How many bytes from `addr` on, up to `len`, can be reached before the first fault.
  std::size_t reachable(std::uint64_t addr, std::size_t len) const {
    if (addr < kNullPagesEnd) return 0;
    const std::uint64_t end =
        len > std::numeric_limits<std::uint64_t>::max() - addr ? addr : addr + len;
    std::uint64_t stop = end;
    sync::LockGuard guard(lock_);
    for (const auto& [start, limit] : forbidden_) {
      if (start < stop && limit > addr) stop = std::max(start, addr);
    }
    return stop - addr;
  }

 private:
  mutable sync::StdMutex lock_;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> forbidden_ CUSED_GUARDED_BY(lock_);
};

class FakeUserMemory final : public core::UserMemory {
 public:
  // `reads`, when given, counts the reads of the caller's memory: one per system call the daemon
  // would make (a gathered read_ranges is one, as process_vm_read_ranges makes one per 16
  // ranges, more than any caller passes).
  explicit FakeUserMemory(const FakeAddressSpace& space, std::atomic<std::size_t>* reads = nullptr)
      : space_(space), reads_(reads) {}

  int read(std::uint64_t addr, void* dst, std::size_t len) override {
    if (len == 0) return 0;
    count();
    return copy(dst, addr, len);
  }
  int write(std::uint64_t addr, const void* src, std::size_t len) override {
    if (len == 0) return 0;
    const std::size_t reached = space_.reachable(addr, len);
    detail::unseen_copy(reinterpret_cast<void*>(addr), src, reached);
    return reached == len ? 0 : -EFAULT;
  }
  // As process_vm_read_ranges: in order, stopping at the first range not read whole; an empty
  // range is read whole wherever it points.
  std::size_t read_ranges(std::span<const core::UserRange> ranges) override {
    count();
    std::size_t done = 0;
    while (done < ranges.size() && copy(ranges[done].dst, ranges[done].addr, ranges[done].len) == 0)
      ++done;
    return done;
  }

 private:
  int copy(void* dst, std::uint64_t addr, std::size_t len) const {
    if (len == 0) return 0;
    const std::size_t reached = space_.reachable(addr, len);
    detail::unseen_copy(dst, reinterpret_cast<const void*>(addr), reached);
    return reached == len ? 0 : -EFAULT;
  }
  void count() {
    if (reads_) reads_->fetch_add(1, std::memory_order_relaxed);
  }

  const FakeAddressSpace& space_;
  std::atomic<std::size_t>* reads_;
};

}  // namespace cused::testing

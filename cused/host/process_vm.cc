// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/process_vm.h"

#include <sys/uio.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace cused::host {

namespace {

// A partial transfer (the range crosses into an unmapped page) is a fault like any other.
int transferred_all(ssize_t done, std::size_t len) {
  return done >= 0 && static_cast<std::size_t>(done) == len ? 0 : -EFAULT;
}

// Ranges gathered per system call; far below IOV_MAX, and more than any caller passes.
constexpr std::size_t kRangesPerCall = 16;

std::atomic<std::uint64_t> accesses{0};

void* local_address(const core::UserRange& range) { return range.dst; }
void* local_address(const core::UserWriteRange& range) { return const_cast<void*>(range.src); }

ssize_t counted_readv(pid_t pid, const iovec* local, const iovec* remote, unsigned long count) {
  accesses.fetch_add(1, std::memory_order_relaxed);
  return process_vm_readv(pid, local, count, remote, count, 0);
}

ssize_t counted_writev(pid_t pid, const iovec* local, const iovec* remote, unsigned long count) {
  accesses.fetch_add(1, std::memory_order_relaxed);
  return process_vm_writev(pid, local, count, remote, count, 0);
}

// The kernel stops at the first remote range it cannot reach, so the byte count tells how many
// ranges went whole. `transfer` moves `count` iovec pairs in one system call.
template <typename Range, typename Transfer>
std::size_t transfer_ranges(std::span<const Range> ranges, Transfer transfer) {
  std::size_t done = 0;
  while (done < ranges.size()) {
    std::span<const Range> batch =
        ranges.subspan(done, std::min(kRangesPerCall, ranges.size() - done));
    iovec local[kRangesPerCall], remote[kRangesPerCall];
    int count = 0;
    for (const auto& range : batch) {
      if (range.len == 0) continue;
      local[count] = {local_address(range), range.len};
      remote[count] = {reinterpret_cast<void*>(range.addr), range.len};
      ++count;
    }
    ssize_t got = count ? transfer(local, remote, count) : 0;
    std::size_t left = got > 0 ? static_cast<std::size_t>(got) : 0;
    for (const auto& range : batch) {
      if (range.len > left) return done;
      left -= range.len;
      ++done;
    }
  }
  return done;
}

}  // namespace

int process_vm_read(pid_t pid, std::uint64_t addr, void* dst, std::size_t len) {
  if (len == 0) return 0;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(counted_readv(pid, &local, &remote, 1), len);
}

int process_vm_write(pid_t pid, std::uint64_t addr, const void* src, std::size_t len) {
  if (len == 0) return 0;
  iovec local{const_cast<void*>(src), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(counted_writev(pid, &local, &remote, 1), len);
}

std::size_t process_vm_read_ranges(pid_t pid, std::span<const core::UserRange> ranges) {
  return transfer_ranges(ranges, [pid](const iovec* local, const iovec* remote, int count) {
    return counted_readv(pid, local, remote, count);
  });
}

std::size_t process_vm_write_ranges(pid_t pid, std::span<const core::UserWriteRange> ranges) {
  return transfer_ranges(ranges, [pid](const iovec* local, const iovec* remote, int count) {
    return counted_writev(pid, local, remote, count);
  });
}

std::uint64_t remote_accesses() { return accesses.load(std::memory_order_relaxed); }

}  // namespace cused::host

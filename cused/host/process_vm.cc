#include "cused/host/process_vm.h"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

namespace cused::host {

namespace {

// A partial transfer (the range crosses into an unmapped page) is a fault like any other.
int transferred_all(ssize_t done, std::size_t len) {
  return done >= 0 && static_cast<std::size_t>(done) == len ? 0 : -EFAULT;
}

// Ranges gathered per system call; far below IOV_MAX, and more than any caller passes.
constexpr std::size_t kRangesPerCall = 16;

}  // namespace

int process_vm_read(pid_t pid, std::uint64_t addr, void* dst, std::size_t len) {
  if (len == 0) return 0;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(process_vm_readv(pid, &local, 1, &remote, 1, 0), len);
}

int process_vm_write(pid_t pid, std::uint64_t addr, const void* src, std::size_t len) {
  if (len == 0) return 0;
  iovec local{const_cast<void*>(src), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(process_vm_writev(pid, &local, 1, &remote, 1, 0), len);
}

// The kernel stops at the first remote range it cannot read, so the byte count tells how many
// ranges arrived whole.
std::size_t process_vm_read_ranges(pid_t pid, std::span<const core::UserRange> ranges) {
  std::size_t done = 0;
  while (done < ranges.size()) {
    std::span<const core::UserRange> batch =
        ranges.subspan(done, std::min(kRangesPerCall, ranges.size() - done));
    iovec local[kRangesPerCall], remote[kRangesPerCall];
    int count = 0;
    for (const auto& range : batch) {
      if (range.len == 0) continue;
      local[count] = {range.dst, range.len};
      remote[count] = {reinterpret_cast<void*>(range.addr), range.len};
      ++count;
    }
    ssize_t got = count ? process_vm_readv(pid, local, count, remote, count, 0) : 0;
    std::size_t left = got > 0 ? static_cast<std::size_t>(got) : 0;
    for (const auto& range : batch) {
      if (range.len > left) return done;
      left -= range.len;
      ++done;
    }
  }
  return done;
}

}  // namespace cused::host

#include "cused/process_memory.h"

#include <sys/uio.h>

#include <cerrno>

namespace cused {

namespace {

// A partial transfer (the range crosses into an unmapped page) is a fault like any other.
int transferred_all(ssize_t done, std::size_t len) {
  return done >= 0 && static_cast<std::size_t>(done) == len ? 0 : -EFAULT;
}

}  // namespace

int ProcessMemory::read(std::uint64_t addr, void* dst, std::size_t len) {
  if (len == 0) return 0;
  iovec local{dst, len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(process_vm_readv(tid_, &local, 1, &remote, 1, 0), len);
}

int ProcessMemory::write(std::uint64_t addr, const void* src, std::size_t len) {
  if (len == 0) return 0;
  iovec local{const_cast<void*>(src), len};
  iovec remote{reinterpret_cast<void*>(addr), len};
  return transferred_all(process_vm_writev(tid_, &local, 1, &remote, 1, 0), len);
}

}  // namespace cused

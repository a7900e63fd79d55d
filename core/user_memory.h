// copy_from_user / copy_to_user for core: the memory of the process whose ioctl is being served.
// The daemon implements it with process_vm_readv/writev on the caller; tests and fuzzers with an
// in-process buffer. Every access is checked: a bad address is EFAULT, never a daemon crash.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cused::core {

class UserMemory {
 public:
  virtual ~UserMemory() = default;
  // Both return 0, or -EFAULT when any byte of [addr, addr + len) is not accessible.
  virtual int read(std::uint64_t addr, void* dst, std::size_t len) = 0;
  virtual int write(std::uint64_t addr, const void* src, std::size_t len) = 0;
};

}  // namespace cused::core

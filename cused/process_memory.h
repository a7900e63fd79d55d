// SPDX-License-Identifier: GPL-2.0-only
// core::UserMemory for a client process: copy_from_user / copy_to_user become
// process_vm_readv / process_vm_writev on the calling thread (cused/host/process_vm.h). The kernel
// checks every access, so a bad pointer in a client's BINDER_WRITE_READ is EFAULT for that
// client, never a daemon fault.
#pragma once

#include <sys/types.h>

#include "core/user_memory.h"
#include "cused/host/process_vm.h"

namespace cused {

class ProcessMemory final : public core::UserMemory {
 public:
  explicit ProcessMemory(pid_t tid) : tid_(tid) {}
  int read(std::uint64_t addr, void* dst, std::size_t len) override {
    return host::process_vm_read(tid_, addr, dst, len);
  }
  int write(std::uint64_t addr, const void* src, std::size_t len) override {
    return host::process_vm_write(tid_, addr, src, len);
  }
  std::size_t read_ranges(std::span<const core::UserRange> ranges) override {
    return host::process_vm_read_ranges(tid_, ranges);
  }
  std::size_t write_ranges(std::span<const core::UserWriteRange> ranges) override {
    return host::process_vm_write_ranges(tid_, ranges);
  }

 private:
  pid_t tid_;
};

}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
// A process's memory reached from outside it with process_vm_readv / process_vm_writev: how the
// daemon does copy_from_user / copy_to_user for its callers (cused::ProcessMemory), and how the
// engine's tests reach their own memory the same way. Every access is checked by the kernel, so
// a bad address is -EFAULT, never a fault in the daemon.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/user_memory.h"

namespace cused::host {

// 0, or -EFAULT unless all `len` bytes were copied.
int process_vm_read(pid_t pid, std::uint64_t addr, void* dst, std::size_t len);
int process_vm_write(pid_t pid, std::uint64_t addr, const void* src, std::size_t len);
// UserMemory::read_ranges in one system call per 16 ranges: how many leading ranges arrived whole.
std::size_t process_vm_read_ranges(pid_t pid, std::span<const core::UserRange> ranges);
// UserMemory::write_ranges the same way: how many leading ranges were written whole.
std::size_t process_vm_write_ranges(pid_t pid, std::span<const core::UserWriteRange> ranges);

// process_vm_readv / process_vm_writev calls this process has made: what a call costs in accesses
// to its callers' memory (bench-transport, tests/integration/run_test.cc).
std::uint64_t remote_accesses();

}  // namespace cused::host

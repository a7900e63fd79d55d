// SPDX-License-Identifier: GPL-2.0-only
// copy_from_user / copy_to_user for core: the memory of the process whose ioctl is being served.
// The daemon implements it with process_vm_readv/writev on the caller; tests and fuzzers with an
// in-process buffer. Every access is checked: a bad address is EFAULT, never a daemon crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cused::core {

// One piece of a gathered read: `len` bytes of the caller's memory at `addr` into `dst`.
struct UserRange {
  std::uint64_t addr = 0;
  void* dst = nullptr;
  std::size_t len = 0;
};

// One piece of a gathered write: `len` bytes from `src` into the caller's memory at `addr`.
struct UserWriteRange {
  std::uint64_t addr = 0;
  const void* src = nullptr;
  std::size_t len = 0;
};

// Where a thread's last transaction payload was (data and offsets), to be read ahead with its
// next commands. Empty when there is nothing worth guessing.
struct PayloadHint {
  // Larger payloads are not guessed: their copy costs more than the system call it saves.
  static constexpr std::size_t kMaxBytes = 4096;
  std::uint64_t data = 0;
  std::uint64_t data_size = 0;
  std::uint64_t offsets = 0;
  std::uint64_t offsets_size = 0;
  bool empty() const { return data_size == 0 && offsets_size == 0; }
};

// What a frontend that copies a BINDER_WRITE_READ argument in itself (`cused run`) may read in
// the same access as the argument, guessed from the thread's last binder_write_read: the start of
// its write buffer, and the payload of its last transaction. Core checks every read it makes
// against the copies' addresses and lengths (PrefetchedMemory), so a wrong guess costs one access
// more and nothing else.
struct ReadAheadHint {
  std::uint64_t write_buffer = 0;
  std::size_t write_len = 0;  // 0: no commands guessed
  PayloadHint payload;
};

class UserMemory {
 public:
  virtual ~UserMemory() = default;
  // Both return 0, or -EFAULT when any byte of [addr, addr + len) is not accessible.
  virtual int read(std::uint64_t addr, void* dst, std::size_t len) = 0;
  virtual int write(std::uint64_t addr, const void* src, std::size_t len) = 0;
  // Reads the ranges in order and returns how many of them, from the first, were read whole; it
  // stops at the first that is not. The daemon does this in one system call, which is the point:
  // reaching another process's memory costs a system call per access, not per byte.
  virtual std::size_t read_ranges(std::span<const UserRange> ranges) {
    std::size_t done = 0;
    while (done < ranges.size() && read(ranges[done].addr, ranges[done].dst, ranges[done].len) == 0)
      ++done;
    return done;
  }
  // Writes the ranges in order and returns how many of them, from the first, were written whole;
  // it stops at the first that is not. One system call in the daemon, as read_ranges.
  virtual std::size_t write_ranges(std::span<const UserWriteRange> ranges) {
    std::size_t done = 0;
    while (done < ranges.size() &&
           write(ranges[done].addr, ranges[done].src, ranges[done].len) == 0)
      ++done;
    return done;
  }
};

}  // namespace cused::core

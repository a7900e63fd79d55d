// SPDX-License-Identifier: GPL-2.0-only
// The argument of a notified binder ioctl, copied in as binder_ioctl copies it (exactly
// core::kernel_ioctl_argument's bytes), and with it, in the same process_vm_readv, what core
// guesses the ioctl's write half will read (core::ReadAheadHint): for a binder_write_read, the
// start of the thread's last write buffer and its last payload. A caller's memory costs a system
// call per access, so a call whose commands sit where they sat last time costs one read per side
// instead of two. Core checks every read against the copies' addresses and lengths
// (IoctlRequest::read_ahead), so a wrong guess costs one access more; a guessed range that
// cannot be read is not offered, so it never fails the ioctl, and a bad buffer fails where the
// kernel's copy_from_user would.
#pragma once

#include <array>
#include <boost/container/static_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/user_memory.h"
#include "core/user_reader.h"
#include "uapi/binder.h"

namespace cused::run {

class ArgumentCopy {
 public:
  // Reads `size` bytes (at most a binder_write_read's) at `arg` of `caller`, and what `hint`
  // names after them. An argument that cannot be read whole is empty.
  ArgumentCopy(core::UserMemory& caller, std::uint64_t arg, std::size_t size,
               const core::ReadAheadHint& hint);
  ArgumentCopy(const ArgumentCopy&) = delete;
  ArgumentCopy& operator=(const ArgumentCopy&) = delete;

  std::span<const std::byte> argument() const { return {argument_.data(), argument_size_}; }
  // The guessed ranges that arrived whole, for IoctlRequest::read_ahead.
  std::span<const core::UserRange> read_ahead() const { return {held_.data(), held_.size()}; }

 private:
  std::array<std::byte, sizeof(binder_write_read)> argument_;
  std::size_t argument_size_ = 0;
  std::array<std::byte, core::UserReader::kWindow> commands_;
  std::array<std::byte, core::PayloadHint::kMaxBytes> payload_;
  boost::container::static_vector<core::UserRange, 3> held_;
};

}  // namespace cused::run

// SPDX-License-Identifier: GPL-2.0-only
// The futex calls core/sync's locks make (declared in core/sync/futex.h, the seam). Private
// futexes: every word lives in the daemon's memory.
#include "core/sync/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cused::sync {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

namespace {

void wake_address(const void* address, int count) {
  syscall(SYS_futex, address, FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  // EAGAIN (word changed) and EINTR both just mean "look again", which every caller does.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) { wake_address(&word, count); }

void PendingWake::send() const {
  if (address_ != nullptr) wake_address(address_, 1);
}

}  // namespace cused::sync

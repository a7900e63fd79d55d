// SPDX-License-Identifier: GPL-2.0-only
// Thin wrappers over the futex system call (private futexes: all users live in the daemon).
// Declared here, defined by the host layer (cused/host/futex.cc, library cused-host-sync): core
// makes no system call itself. The seam is at link time, not a virtual interface: the calls were
// already out of line in a translation unit of their own, so the lock policies pay nothing more
// per wait or wake than before. A program that links core and takes a sync lock links
// cused-host-sync too (host_dep brings it; host_sync_dep alone for core-only programs).
#pragma once

#include <atomic>
#include <cstdint>

namespace cused::sync {

// Sleeps while `word` holds `expected`. Returns early on any wake-up, signal or change: callers
// always re-check their word.
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected);
void futex_wake(std::atomic<std::uint32_t>& word, int count);

// A wake-up addressed to a futex word whose owner may be gone by the time it is sent: it keeps only
// the address, which the kernel looks up in its futex hash without touching our objects. A stale
// wake-up is a spurious wake-up for whoever waits at that address later, and every futex waiter in
// core/sync tolerates those by re-checking its word.
class PendingWake {
 public:
  PendingWake() = default;
  explicit PendingWake(const std::atomic<std::uint32_t>& word) : address_(&word) {}
  void send() const;

 private:
  const void* address_ = nullptr;
};

}  // namespace cused::sync

// Thin wrappers over the futex system call (private futexes: all users live in the daemon).
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

#include "core/sync/wait_queue.h"

namespace cused::sync::detail {

bool lock_word_or_queue(std::atomic<std::uint32_t>& word, WaitQueue& queue, Waiter& self) {
  std::uint32_t seen = word.load(std::memory_order_relaxed);
  for (;;) {
    if (!(seen & kLocked)) {
      if (word.compare_exchange_weak(seen, seen | kLocked, std::memory_order_acquire,
                                     std::memory_order_relaxed))
        return true;
    } else if (word.compare_exchange_weak(seen, seen + kOneWaiter, std::memory_order_relaxed,
                                          std::memory_order_relaxed)) {
      queue.push_back(self);
      return false;
    }
  }
}

}  // namespace cused::sync::detail

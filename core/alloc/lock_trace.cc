#include "core/alloc/lock_trace.h"

namespace cused::core::alloc {
namespace {

std::uint64_t ns(trace::TraceClock::duration duration) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
}

}  // namespace

std::string_view to_string(TracedLock lock) {
  switch (lock) {
    case TracedLock::alloc:
      return "alloc";
    case TracedLock::alloc_install:
      return "alloc_install";
  }
  return "unknown";
}

void LockTrace::contended() const {
  trace::emit(TraceEventType::kLockContended, lock_, variant_, policy_);
}

// The hold starts when the wait ends: one clock read for both.
void LockTrace::acquired(trace::TraceClock::time_point since) {
  const auto now = trace::TraceClock::now();
  traced_ = true;
  hold_ = Hold{now, true};
  trace::emit(TraceEventType::kLockAcquired, lock_, variant_, policy_, ns(now - since));
}

void LockTrace::begin_hold(bool contended) {
  traced_ = true;
  hold_ = Hold{trace::TraceClock::now(), contended};
}

LockTrace::Hold LockTrace::end_hold() {
  traced_ = false;
  return hold_;
}

// A contended hold is always emitted, so that each waiter's three events pair up.
void LockTrace::released(const Hold& hold) const {
  const auto held = trace::TraceClock::now() - hold.since;
  if (!hold.contended && held < kLongHold) return;
  trace::emit(TraceEventType::kLockReleased, lock_, variant_, policy_, ns(held));
}

}  // namespace cused::core::alloc

// SPDX-License-Identifier: GPL-2.0-only
#include "cused/request/caller_scheduling.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "core/sync/preemption.h"
#include "cused/host/recent_by_tid.h"

namespace cused {
namespace {

// The kernel's struct sched_attr, first version (SCHED_ATTR_SIZE_VER0): glibc 2.36 has neither
// the struct nor sched_getattr/sched_setattr wrappers, and linux/sched/types.h clashes with
// <sched.h>.
struct sched_attr {
  std::uint32_t size;
  std::uint32_t sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime, sched_deadline, sched_period;
};
static_assert(sizeof(sched_attr) == 48);

bool get_attr(pid_t tid, sched_attr& attr) {
  attr = {};
  return syscall(SYS_sched_getattr, tid, &attr, sizeof attr, 0) == 0;
}

std::atomic<std::uint64_t> g_changes{0};
std::atomic<std::uint64_t> g_unpreemptible{0};
// Set once SCHED_FIFO was refused (no CAP_SYS_NICE, no real-time runtime in the daemon's cgroup):
// from then on no thread asks again, rather than pay a failing sched_setattr every section.
std::atomic<bool> g_fifo_refused{false};

// What a spinlock section runs at (core/sync/preemption.h): SCHED_FIFO, which no ordinary
// (SCHED_OTHER) thread preempts, as nothing preempts a kernel spinlock's holder. Priority 1, the
// lowest real-time one: it outranks every nice level and no real-time work of the machine's.
constexpr SchedulingAttributes kUnpreemptible{SCHED_FIFO, 0, 1};

bool real_time(const SchedulingAttributes& attributes) {
  return attributes.policy == SCHED_FIFO || attributes.policy == SCHED_RR;
}

// Whether a thread at `wanted` is preemptible by the daemon's ordinary work, i.e. serves a caller
// less urgent than the daemon: only such a thread makes its spinlock sections unpreemptible (two
// sched_setattr calls each). A caller as urgent as the daemon or more is rarely preempted in a
// section of a few hundred nanoseconds, and paying the calls on its every section would slow the
// high-priority work the experiments measure.
bool below(const SchedulingAttributes& wanted, const SchedulingAttributes& own) {
  if (real_time(wanted)) return false;
  return real_time(own) || wanted.policy == SCHED_IDLE || wanted.nice > own.nice;
}

// Per daemon thread: what it runs at, what it ran at before its first scope, and the callers
// seen lately. Thread-local, so that serving a request takes no lock.
struct ThreadState {
  bool started = false;
  SchedulingAttributes own;
  SchedulingAttributes current;
  host::RecentByTid<SchedulingAttributes> callers{CallerScheduling::kStaleAfter};

  bool caller(pid_t tid, SchedulingAttributes& out) {
    return callers.get(tid, out, read_scheduling);
  }
};

thread_local ThreadState t_state;

// A daemon thread serving at its caller's (non-real-time) attributes runs its spinlock sections
// at kUnpreemptible and goes back to the caller's attributes after them.
class SpinSections final : public sync::PreemptionControl {
 public:
  void disable() override {
    if (depth_++ > 0) return;
    boosted_ = apply_scheduling(kUnpreemptible);
    if (boosted_)
      g_unpreemptible.fetch_add(1, std::memory_order_relaxed);
    else if (errno == EPERM)
      g_fifo_refused.store(true, std::memory_order_relaxed);
  }
  void enable() override {
    if (--depth_ > 0 || !boosted_) return;
    apply_scheduling(t_state.current);
    boosted_ = false;
  }

 private:
  int depth_ = 0;
  bool boosted_ = false;
};

thread_local SpinSections t_spin_sections;

bool takeable(const SchedulingAttributes& attributes) {
  return attributes.policy == SCHED_OTHER || attributes.policy == SCHED_BATCH ||
         attributes.policy == SCHED_IDLE || attributes.policy == SCHED_FIFO ||
         attributes.policy == SCHED_RR;
}

}  // namespace

bool read_scheduling(pid_t tid, SchedulingAttributes& out) {
  sched_attr attr;
  if (!get_attr(tid, attr)) return false;
  out = {attr.sched_policy, attr.sched_nice, attr.sched_priority};
  return true;
}

bool apply_scheduling(const SchedulingAttributes& attributes) {
  sched_attr attr{};
  attr.size = sizeof attr;
  attr.sched_policy = attributes.policy;
  attr.sched_nice = attributes.nice;
  attr.sched_priority = attributes.rt_priority;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

CallerScheduling::CallerScheduling(pid_t tid, bool enabled) {
  if (!enabled) return;
  ThreadState& state = t_state;
  if (!state.started) {
    if (!read_scheduling(0, state.own)) return;
    state.current = state.own;
    state.started = true;
  }
  SchedulingAttributes wanted;
  if (!state.caller(tid, wanted) || !takeable(wanted) || wanted == state.current) return;
  if (!apply_scheduling(wanted)) return;
  state.current = wanted;
  changed_ = true;
  g_changes.fetch_add(1, std::memory_order_relaxed);
  if (below(wanted, state.own) && !g_fifo_refused.load(std::memory_order_relaxed))
    sync::thread_preemption_control() = &t_spin_sections;
}

CallerScheduling::~CallerScheduling() {
  if (!changed_) return;
  sync::thread_preemption_control() = nullptr;
  ThreadState& state = t_state;
  if (apply_scheduling(state.own)) state.current = state.own;
}

std::uint64_t CallerScheduling::changes() { return g_changes.load(std::memory_order_relaxed); }

std::uint64_t CallerScheduling::unpreemptible_sections() {
  return g_unpreemptible.load(std::memory_order_relaxed);
}

}  // namespace cused

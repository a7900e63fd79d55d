// SPDX-License-Identifier: GPL-2.0-only
// S4.12: binder's nice inheritance, as binder.c does it on `current`: a thread that receives a
// sync call takes the sender's nice when it is more urgent than the node's minimum, else the
// minimum; a oneway only lowers a less urgent thread to the minimum; the reply restores what the
// thread had; a thread that may take proc work returns to the proc's default (its opener's nice).
#include "core/proc.h"

namespace cused::core {
namespace {

constexpr int kMinNice = -20, kMaxNice = 19;

// nice_to_rlimit / rlimit_to_nice: RLIMIT_NICE counts from 1 (nice 19) to 40 (nice -20).
long nice_to_rlimit(long nice) { return kMaxNice - nice + 1; }
long rlimit_to_nice(long rlimit) { return kMaxNice - rlimit + 1; }

}  // namespace

int Proc::thread_nice(const Thread& thread) const {
  return priorities_ ? priorities_->nice(thread.tid).value_or(0) : 0;
}

// binder_set_nice: can_nice() or the lowest nice RLIMIT_NICE allows; set_user_nice ignores a
// value out of range (node minimums are 0..255, libbinder's 0x7f among them).
void Proc::set_nice(const Thread& thread, int nice) const {
  if (!priorities_) return;
  long wanted = nice;
  // is_nice_reduction compares as unsigned long, as here: a nice past 20 never qualifies.
  const bool can_nice =
      nice_permission_.cap_sys_nice ||
      static_cast<unsigned long>(nice_to_rlimit(wanted)) <= nice_permission_.rlimit_nice;
  if (!can_nice) wanted = rlimit_to_nice(static_cast<long>(nice_permission_.rlimit_nice));
  if (wanted < kMinNice || wanted > kMaxNice) return;
  priorities_->set_nice(thread.tid, static_cast<int>(wanted));
}

void Proc::inherit_priority(const Thread& thread, Transaction& t, const Node& target) const {
  if (!priorities_) return;
  const int saved = thread_nice(thread);
  t.saved_priority.store(saved, std::memory_order_relaxed);
  const bool sync = !(t.flags & TF_ONE_WAY);
  if (sync && t.priority < target.min_priority)
    set_nice(thread, t.priority);
  else if (sync || saved > target.min_priority)
    set_nice(thread, target.min_priority);
}

}  // namespace cused::core

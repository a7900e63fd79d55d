// SPDX-License-Identifier: GPL-2.0-only
// Death notifications (S7.1-S7.5): registration, clearing, and the clear-vs-death race that
// always ends DEAD_BINDER -> (BC_DEAD_BINDER_DONE) -> CLEAR_DEATH_NOTIFICATION_DONE.
#include "core/proc.h"

namespace cused::core {

// S7.1: a registration on a dead node fires at once.
void Proc::request_death_notification(Thread&, const binder_handle_cookie& hc) {
  const binder_uintptr_t cookie = hc.cookie;  // binder_handle_cookie is packed
  auto death = std::make_shared<Death>(cookie);
  sync::LockGuard outer(outer_lock_);
  Ref* ref = get_ref(hc.handle, false);
  if (!ref) return;  // "invalid ref": a soft error
  sync::LockGuard node_guard(ref->node_lock);
  if (ref->death) return;  // "already set": the new cookie is ignored
  ref->death = death;
  count_object(death->counter, ObjStat::kDeath);
  assume_same_lock(ref->node_lock, ref->node->lock);
  if (ref->node->proc) return;
  sync::LockGuard inner(inner_lock_);
  death->type = WorkType::kDeadBinder;
  todo_.push_back(*death);
  wakeup_proc();
}

// S7.4: forget the registration. Not yet triggered: CLEAR_DONE now. Triggered (queued or
// delivered): it stays a death, and CLEAR_DONE follows the user's BC_DEAD_BINDER_DONE.
void Proc::clear_death_notification(Thread& thread, const binder_handle_cookie& hc) {
  sync::LockGuard outer(outer_lock_);
  Ref* ref = get_ref(hc.handle, false);
  if (!ref) return;
  sync::LockGuard node_guard(ref->node_lock);
  if (!ref->death || ref->death->cookie != hc.cookie) return;  // not active / cookie mismatch
  std::shared_ptr<Death> death = std::move(ref->death);
  sync::LockGuard inner(inner_lock_);
  if (!death->queued()) {
    death->type = WorkType::kClearDeathNotification;
    queue_clear_death_done(thread, *death);
  } else {
    death->type = WorkType::kDeadBinderAndClear;
  }
}

// S7.3
void Proc::dead_binder_done(Thread& thread, binder_uintptr_t cookie) {
  sync::LockGuard inner(inner_lock_);
  auto* found = delivered_death_.find_first<Death>(
      [&](const Death& death) { return death.cookie == cookie; });
  if (!found) return;  // "not found": a soft error
  DequeuedWork done = WorkList::unlink(*found);
  if (found->type == WorkType::kDeadBinderAndClear) {
    found->type = WorkType::kClearDeathNotification;
    queue_clear_death_done(thread, *found);
  }
}

// CLEAR_DONE goes to the thread itself when it is a looper, else to any thread of the proc.
void Proc::queue_clear_death_done(Thread& thread, Death& death) {
  assume_locked(thread);
  if (thread.is_looper()) {
    enqueue_thread_work(thread, death);
  } else {
    todo_.push_back(death);
    wakeup_proc();
  }
}

}  // namespace cused::core

// SPDX-License-Identifier: GPL-2.0-only
// BINDER_FREEZE and BINDER_GET_FROZEN_INFO (S2.10, S2.11) and the frozen side of
// binder_proc_transaction that is not a plain check: TF_UPDATE_TXN (S4.13). The checks on the
// transaction path (BR_FROZEN_REPLY, BR_TRANSACTION_PENDING_FROZEN) are in transaction.cc.
#include "core/freeze.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/driver.h"
#include "core/proc.h"
#include "core/wake.h"

namespace cused::core {
namespace {

std::atomic<std::uint64_t> last_wait_id{0};

}  // namespace

// S2.10: every proc of the pid, on every device, in list order. A thaw always succeeds; a freeze
// stops at the first proc that fails (the ones before stay frozen).
void Proc::freeze_ioctl(const std::shared_ptr<Thread>& thread, const IoctlRequest& request,
                        std::unique_ptr<Completion> completion) {
  end_ioctl(*thread);
  auto call = std::make_shared<FreezeCall>();
  call->completion = std::move(completion);
  call->tid = request.tid;
  call->caller = weak_from_this();
  if (request.arg.size() < sizeof call->info) return finish_freeze(call, -EFAULT);
  std::memcpy(&call->info, request.arg.data(), sizeof call->info);
  call->targets = driver_.procs_of(static_cast<pid_t>(call->info.pid));
  if (call->targets.empty()) return finish_freeze(call, -EINVAL);
  if (!call->info.enable) {
    for (auto& target : call->targets) target->thaw();
    return finish_freeze(call, 0);
  }
  {
    sync::LockGuard guard(inner_lock_);
    freeze_.calls[request.tid] = call;
  }
  continue_freeze(call, false);
}

void Proc::continue_freeze(const std::shared_ptr<FreezeCall>& call, bool resumed) {
  for (; call->next < call->targets.size(); ++call->next, resumed = false) {
    Proc& target = *call->targets[call->next];
    if (!resumed) {
      target.begin_freeze();
      if (call->info.timeout_ms > 0) {
        if (call->completion->interrupted()) return fail_interrupted_freeze(call);
        if (std::uint64_t id = target.park_freeze(call)) {
          // An interrupt that came while the wait was being registered could not claim it.
          if (call->interrupt_pending && call->claim(id)) take_interrupt(call, id);
          return;
        }
      }
    }
    if (int ret = target.end_freeze()) return finish_freeze(call, ret);
  }
  finish_freeze(call, 0);
}

void Proc::finish_freeze(const std::shared_ptr<FreezeCall>& call, int result) {
  auto caller = call->caller.lock();
  // binder_ioctl_done is the caller's, also when a drain or the timeout ends its wait on a
  // daemon thread: the kernel's caller waits in its own ioctl.
  trace::TaskScope task({call->tid, caller ? caller->pid() : 0});
  if (caller) {
    sync::LockGuard guard(caller->inner_lock_);
    auto it = caller->freeze_.calls.find(call->tid);
    if (it != caller->freeze_.calls.end() && it->second.lock() == call)
      caller->freeze_.calls.erase(it);
  }
  WakeScope::current().answer(std::move(call->completion), result, {});
}

// A signal during the wait: the proc is thawed and the ioctl fails (ERESTARTSYS, seen as EINTR).
bool Proc::interrupt_freeze(pid_t tid) {
  std::shared_ptr<FreezeCall> call;
  {
    sync::LockGuard guard(inner_lock_);
    auto it = freeze_.calls.find(tid);
    if (it == freeze_.calls.end()) return false;
    call = it->second.lock();
  }
  if (!call) return false;
  call->interrupt_pending = true;
  const std::uint64_t id = call->wait_id.load();
  if (!call->claim(id)) return false;  // not parked (yet), or resumed by someone else
  return take_interrupt(call, id);
}

// The caller owns `call` (it won wait `id`). The completion says whether the interrupt was for
// this request; a late one for an earlier request of the tid puts the wait back as it was.
bool Proc::take_interrupt(const std::shared_ptr<FreezeCall>& call, std::uint64_t id) {
  Proc& target = *call->targets[call->next];
  if (!call->completion->interrupted()) {
    call->interrupt_pending = false;
    call->wait_id.store(id);
    bool drained;
    {
      sync::LockGuard guard(target.inner_lock_);
      drained = target.outstanding_txns_ == 0 && target.freeze_.frozen;
    }
    // A drain while the wait was not armed found nothing to resume.
    if (drained && call->claim(id)) {
      target.forget_freeze_waiter(*call);
      target.driver_.timer().soon([call] {
        WakeScope scope(call->tid);
        continue_freeze(call, true);
      });
    }
    return false;
  }
  target.forget_freeze_waiter(*call);
  fail_interrupted_freeze(call);
  return true;
}

void Proc::fail_interrupted_freeze(const std::shared_ptr<FreezeCall>& call) {
  Proc& target = *call->targets[call->next];
  {
    sync::LockGuard guard(target.inner_lock_);
    target.freeze_.frozen = false;
  }
  finish_freeze(call, -EINTR);
}

// S2.10 thaw: the recv bits go, and every registration on this proc's nodes hears "thawed".
void Proc::thaw() {
  {
    sync::LockGuard guard(inner_lock_);
    freeze_.set(false);
  }
  add_freeze_work(false);
}

// From here on incoming sync calls are refused (S4.13).
void Proc::begin_freeze() {
  sync::LockGuard guard(inner_lock_);
  freeze_.set(true);
}

// Parks `call` on this proc until its outstanding transactions drain (or the deadline). Returns
// the wait's id, or 0 when there is nothing to wait for.
std::uint64_t Proc::park_freeze(const std::shared_ptr<FreezeCall>& call) {
  const std::uint64_t id = last_wait_id.fetch_add(1, std::memory_order_relaxed) + 1;
  {
    sync::LockGuard guard(inner_lock_);
    if (outstanding_txns_ == 0) return 0;
    call->wait_id.store(id);
    freeze_.waiters.push_back({call, id});
  }
  const std::chrono::milliseconds timeout(call->info.timeout_ms);
  driver_.timer().after(timeout, [weak = std::weak_ptr<FreezeCall>(call), id] {
    auto call = weak.lock();
    if (!call || !call->claim(id)) return;
    WakeScope scope(call->tid);
    call->targets[call->next]->forget_freeze_waiter(*call);
    continue_freeze(call, true);
  });
  return id;
}

// After the wait: still busy (an undelivered or unanswered transaction, or a thread in the middle
// of one) -> EAGAIN and the proc is thawed; else frozen for good and the registrations hear it.
int Proc::end_freeze() {
  {
    sync::LockGuard guard(inner_lock_);
    if (txns_pending()) {
      freeze_.frozen = false;
      return -EAGAIN;
    }
  }
  add_freeze_work(true);
  return 0;
}

void Proc::forget_freeze_waiter(const FreezeCall& call) {
  sync::LockGuard guard(inner_lock_);
  std::erase_if(freeze_.waiters, [&](const FreezeWaiter& w) { return w.call.get() == &call; });
}

// binder_txns_pending_ilocked
bool Proc::txns_pending() {
  if (outstanding_txns_ > 0) return true;
  for (const auto& [tid, thread] : threads_) {
    assume_locked(*thread);
    if (thread->transaction_stack) return true;
  }
  return false;
}

std::vector<FreezeWaiter> Proc::take_drained_freeze_waiters() {
  if (outstanding_txns_ != 0 || !freeze_.frozen) return {};
  return std::exchange(freeze_.waiters, {});
}

// The wait ends as the kernel's wake_up_interruptible_all would end it: the continuation runs on
// the timer's thread, outside whatever locks the drain happened under.
void Proc::resume_drained(std::vector<FreezeWaiter> waiters) {
  for (auto& waiter : waiters) {
    driver_.timer().soon([call = std::move(waiter.call), id = waiter.wait_id] {
      if (!call->claim(id)) return;
      WakeScope scope(call->tid);
      continue_freeze(call, true);
    });
  }
}

// S2.11: OR over every proc of the pid.
int Proc::get_frozen_info(binder_frozen_status_info& info) {
  info.sync_recv = info.async_recv = 0;
  auto procs = driver_.procs_of(static_cast<pid_t>(info.pid));
  if (procs.empty()) return -EINVAL;
  for (auto& proc : procs) {
    sync::LockGuard guard(proc->inner_lock_);
    info.sync_recv |= (proc->freeze_.sync_recv ? 1u : 0u) | (proc->txns_pending() ? 2u : 0u);
    info.async_recv |= proc->freeze_.async_recv ? 1u : 0u;
  }
  return 0;
}

// binder_can_update_transaction / binder_find_outdated_transaction_ilocked (S4.13): an older
// oneway waiting in the node's queue with the same code and flags (both carrying
// TF_ONE_WAY|TF_UPDATE_TXN) from the same sending process.
std::shared_ptr<Transaction> Proc::find_outdated_transaction(Node& node, const Transaction& t) {
  constexpr std::uint32_t kUpdate = TF_ONE_WAY | TF_UPDATE_TXN;
  std::shared_ptr<Transaction> found;
  node.async_todo.for_each([&](Work& work) {
    if (found || work.type != WorkType::kTransaction) return;
    auto& queued = static_cast<Transaction&>(work);
    if ((queued.flags & t.flags & kUpdate) != kUpdate) return;
    if (queued.code == t.code && queued.flags == t.flags && queued.from_pid == t.from_pid &&
        queued.target_node == t.target_node)
      found = std::static_pointer_cast<Transaction>(queued.shared_from_this());
  });
  return found;
}

// The superseded oneway is gone without a trace: its buffer (and what it held) is released, and
// the node's async queue does not advance for it.
void Proc::discard_outdated_transaction(const std::shared_ptr<Transaction>& outdated) {
  alloc::Buffer* buffer;
  {
    sync::LockGuard guard(outdated->lock);
    buffer = std::exchange(outdated->buffer, nullptr);
    outdated->to_proc = nullptr;  // no longer counted (the caller took it off outstanding)
  }
  if (!buffer) return;
  BufferState state;
  {
    sync::LockGuard guard(inner_lock_);
    state = take_buffer_state(*buffer);
  }
  // Undelivered: its files are dropped with the record, never installed. (The kernel frees the
  // superseded transaction without putting its files, and releases the buffer as delivered.)
  release_objects(nullptr, state, nullptr);
  alloc_->free_buffer(*buffer);
}

}  // namespace cused::core

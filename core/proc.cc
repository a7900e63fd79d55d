// SPDX-License-Identifier: GPL-2.0-only
// Proc lifetime, thread lookup, the work queues and wake-ups (binder.c's enqueue/wakeup helpers).
#include "core/proc.h"

#include <cerrno>

#include "core/driver.h"
#include "core/trace_events.h"
#include "core/wake.h"

namespace cused::core {

Proc::Proc(std::shared_ptr<Device> device, const DeviceOptions& options,
           const OpenerIdentity& opener, std::unique_ptr<BufferFile> buffers,
           std::unique_ptr<MappingFinder> mapping)
    : device_(std::move(device)),
      driver_(device_->driver()),
      context_(device_->context()),
      pid_(opener.pid),
      euid_(opener.euid),
      options_(options),
      defer_complete_(options.defer_complete),
      labels_(options.labels),
      priorities_(driver_.thread_priorities()),
      nice_permission_(priorities_ ? priorities_->permission(opener.tid) : NicePermission{}),
      default_priority_(priorities_ ? priorities_->nice(opener.tid).value_or(0) : 0),
      // Only priority=android reads it (mainline keeps the nice above): no host query otherwise.
      default_sched_priority_(options.priority == DeviceOptions::Priority::kAndroid
                                  ? supported_sched_priority(priorities_.get(), opener.tid)
                                  : SchedPriority{}),
      buffers_(std::move(buffers)),
      mapping_(std::move(mapping)),
      alloc_(alloc::make_allocator(
          *buffers_, options.alloc, driver_.page_lru(),
          alloc::AllocatorOptions{
              opener.pid, {}, options.lock_policy, options.install_latency, &driver_.timer()})),
      lock_policy_(options.lock_policy),
      outer_lock_(lock_policy_),
      inner_lock_(lock_policy_) {
  count_object(counter_, ObjStat::kProc);
}

std::shared_ptr<Proc> Proc::open(std::shared_ptr<Device> device, const OpenerIdentity& opener,
                                 std::unique_ptr<BufferFile> buffers,
                                 std::unique_ptr<MappingFinder> mapping) {
  const DeviceOptions options = device->options();
  auto proc = std::make_shared<Proc>(std::move(device), options, opener, std::move(buffers),
                                     std::move(mapping));
  proc->driver_.add_proc(proc->pid_, proc);
  // The frontend's pointer: when its last copy goes, the proc is released (S1.9). The engine
  // keeps its own references (threads, nodes, transactions) until release() drops them.
  return std::shared_ptr<Proc>(proc.get(), [proc](Proc*) mutable {
    proc->release();
    proc.reset();
  });
}

// Release (S1.9) ran before the last reference went (open's handle sees to it); what is
// left is the buffer space, which the allocator frees with itself.
Proc::~Proc() = default;

void Proc::count_command(std::uint32_t cmd) {
  trace::emit(TraceEventType::kCommand, cmd);
  stats_.count_command(cmd);
  driver_.stats()->count_command(cmd);
}

void Proc::count_return(std::uint32_t cmd) {
  trace::emit(TraceEventType::kReturn, cmd);
  stats_.count_return(cmd);
  driver_.stats()->count_return(cmd);
}

void Proc::count_object(ObjCounter& counter, ObjStat type) {
  counter.attach(driver_.stats(), type);
}

std::shared_ptr<Thread> Proc::get_thread(pid_t tid) {
  sync::LockGuard guard(inner_lock_);
  if (is_dead_) return nullptr;
  auto& slot = threads_[tid];
  if (!slot) {
    slot = std::make_shared<Thread>(shared_from_this(), inner_lock_, tid);
    count_object(slot->counter, ObjStat::kThread);
  }
  return slot;
}

void Proc::assume_locked(const Thread& thread) const {
  assume_same_lock(inner_lock_, thread.inner_lock);
}

bool Proc::thread_is_dead(const Thread& thread) const {
  assume_locked(thread);
  return thread.is_dead;
}

// binder_has_work_ilocked. A queue emptied by someone else (a completion or death dequeued
// from it) leaves process_todo set; it is not work (docs/protocol.md).
bool Proc::has_work(Thread& thread, bool do_proc_work) {
  assume_locked(thread);
  return (thread.process_todo && !thread.todo.empty()) || thread.need_return ||
         (do_proc_work && !todo_.empty());
}

// binder_enqueue_thread_work_ilocked: a poll thread queuing work to itself needs its own wake-up.
void Proc::enqueue_thread_work(Thread& thread, Work& work) {
  assume_locked(thread);
  bool self_wakeup = (thread.looper & kLooperPoll) &&
                     thread.tid == WakeScope::current().current_tid() && !thread.process_todo;
  thread.enqueue_work(work);
  if (self_wakeup) wake_thread(thread);
}

void Proc::enqueue_deferred_thread_work(Thread& thread, Work& work) {
  assume_locked(thread);
  thread.enqueue_deferred_work(work);
}

void Proc::dequeue_work(Work& work) {
  DequeuedWork dropped;
  sync::LockGuard guard(inner_lock_);
  dropped = WorkList::unlink(work);
}

// binder_select_thread_ilocked: the thread that most recently started waiting for proc work. It
// leaves the waiting list, so the caller must wake it.
Thread* Proc::select_thread() {
  if (waiting_threads_.empty()) return nullptr;
  Thread& thread = waiting_threads_.front();
  waiting_threads_.pop_front();
  return &thread;
}

// wake_up_interruptible(&thread->wait): a parked read resumes (on this daemon thread, once it
// drops its locks) and a poll() waiter is notified.
void Proc::wake_thread(Thread& thread) {
  assume_locked(thread);
  auto& scope = WakeScope::current();
  if (auto read = unpark(thread)) scope.resume(*this, thread.shared_from_this(), std::move(read));
  if (thread.poll_waiter) scope.notify(thread.poll_waiter);
}

// binder_wakeup_poll_threads_ilocked: no thread waits for proc work, so every idle poll thread
// is told (S1.10).
void Proc::wake_poll_threads() {
  for (auto& [tid, thread] : threads_) {
    assume_locked(*thread);
    if ((thread->looper & kLooperPoll) && thread->available_for_proc_work()) wake_thread(*thread);
  }
}

void Proc::wakeup_thread_or_poll(Thread* thread) {
  if (thread)
    wake_thread(*thread);
  else
    wake_poll_threads();
}

void Proc::wakeup_proc() { wakeup_thread_or_poll(select_thread()); }

bool Proc::ensure_mapped() {
  if (alloc_->is_mapped()) return true;
  sync::LockGuard guard(map_lock_);
  if (alloc_->is_mapped()) return true;
  if (!mapping_) return false;
  auto mapping = mapping_->find();
  // docs/design.md section 2: a writable mapping is one the kernel would have refused (S1.4).
  if (!mapping || mapping->writable) return false;
  return alloc_->map(mapping->length, mapping->start) == 0;
}

int Proc::security_label(std::string& out) {
  sync::LockGuard guard(label_lock_);
  if (!label_ && !label_error_) {
    std::string label;
    label_error_ = labels_->label(pid_, label);
    if (!label_error_) label_ = std::move(label);
  }
  if (label_error_) return label_error_;
  out = *label_;
  return 0;
}

ProcCounts Proc::counts() const {
  ProcCounts counts;
  {
    sync::LockGuard guard(outer_lock_);
    counts.refs = refs_.size();
  }
  sync::LockGuard guard(inner_lock_);
  counts.threads = threads_.size();
  counts.nodes = nodes_.size();
  counts.todo = todo_.size();
  counts.delivered_deaths = delivered_death_.size();
  counts.buffers = buffer_states_.size();
  counts.requested_threads = requested_threads_;
  counts.requested_threads_started = requested_threads_started_;
  counts.outstanding_txns = outstanding_txns_;
  return counts;
}

std::optional<Proc::NodeCounts> Proc::node_counts(binder_uintptr_t ptr) const {
  std::shared_ptr<Node> node;
  {
    sync::LockGuard guard(inner_lock_);
    auto it = nodes_.find(ptr);
    if (it == nodes_.end()) return std::nullopt;
    node = it->second;
  }
  sync::LockGuard guard(node->lock);
  return NodeCounts{node->has_strong_ref,  node->has_weak_ref,         node->local_strong_refs,
                    node->local_weak_refs, node->internal_strong_refs, node->refs.size()};
}

std::optional<std::uint32_t> Proc::thread_looper(pid_t tid) const {
  sync::LockGuard guard(inner_lock_);
  auto it = threads_.find(tid);
  if (it == threads_.end()) return std::nullopt;
  assume_locked(*it->second);
  return it->second->looper;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> Proc::ref_counts(std::uint32_t desc) const {
  sync::LockGuard guard(outer_lock_);
  const Ref* ref = refs_.find(desc);
  if (!ref) return std::nullopt;
  assume_same_lock(outer_lock_, ref->outer_lock);
  return std::pair{ref->strong, ref->weak};
}

}  // namespace cused::core

// SPDX-License-Identifier: GPL-2.0-only
// Work items and the lists that hold them (binder_work and its todo lists). Every list belongs to
// one proc and is guarded by that proc's inner lock: the proc's own queue, each thread's queue,
// each node's async queue and the delivered-death list.
//
// An item lives inside the object it describes (a transaction, a node, a thread's error slot, a
// death registration) and can sit on at most one list at a time. While it is queued the list keeps
// that object alive, so a queue never holds a dangling item, however the owner is torn down.
#pragma once

#include <boost/intrusive/list.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace cused::core {

// The kernel's enum binder_work_type in its order (debug_print shows the kernel's numbers).
enum class WorkType : std::uint8_t {
  kTransaction,
  kTransactionComplete,
  kTransactionPending,            // oneway queued to a frozen proc (BR_TRANSACTION_PENDING_FROZEN)
  kTransactionOnewaySpamSuspect,  // S9.7
  kReturnError,
  kNode,
  kDeadBinder,
  kDeadBinderAndClear,
  kClearDeathNotification,
  kFrozenBinder,
  kClearFreezeNotification,
};

using WorkHook =
    boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

class Work : public WorkHook {
 public:
  explicit Work(WorkType type) : type(type) {}
  virtual ~Work() = default;
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;

  // Changed only under the inner lock of the proc whose list holds (or will hold) the item.
  WorkType type;

  bool queued() const { return is_linked(); }

 protected:
  // The object this item is part of; the list holding the item keeps it alive.
  virtual std::shared_ptr<void> owner() = 0;

 private:
  friend class WorkList;
  std::shared_ptr<void> pin_;
};

// An item taken off a list, together with what keeps its owner alive.
class DequeuedWork {
 public:
  DequeuedWork() = default;
  DequeuedWork(Work* work, std::shared_ptr<void> pin) : work_(work), pin_(std::move(pin)) {}
  explicit operator bool() const { return work_ != nullptr; }
  Work* get() const { return work_; }
  Work* operator->() const { return work_; }
  Work& operator*() const { return *work_; }
  template <typename T>
  T& as() const {
    return static_cast<T&>(*work_);
  }
  std::shared_ptr<void> pin() const { return pin_; }

 private:
  Work* work_ = nullptr;
  std::shared_ptr<void> pin_;
};

class WorkList {
 public:
  WorkList() = default;
  ~WorkList();
  WorkList(const WorkList&) = delete;
  WorkList& operator=(const WorkList&) = delete;

  bool empty() const { return list_.empty(); }
  std::size_t size() const { return list_.size(); }  // linear: for counters, not hot paths
  Work* front() { return empty() ? nullptr : &list_.front(); }
  void push_back(Work& work);
  DequeuedWork pop_front();
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (Work& work : list_) fn(work);
  }
  // The first item for which `match` holds, on a list whose items are all `T`s; null if none.
  template <typename T, typename Match>
  T* find_first(Match&& match) {
    for (Work& work : list_) {
      if (match(static_cast<T&>(work))) return &static_cast<T&>(work);
    }
    return nullptr;
  }

  // Takes `work` off whatever list holds it (list_del_init); an unqueued item is left alone.
  static DequeuedWork unlink(Work& work);

 private:
  boost::intrusive::list<Work, boost::intrusive::constant_time_size<false>> list_;
};

}  // namespace cused::core

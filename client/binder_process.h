// SPDX-License-Identifier: GPL-2.0-only
// libcused-client's process state (libbinder's ProcessState, much reduced): one opened and mapped
// binder device, the local objects this process serves, the context-manager role, death
// callbacks, the looper thread pool, and a count of BINDER_WRITE_READ ioctls (what a
// TF_DEFER_COMPLETE server saves).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "client/binder_device.h"
#include "client/parcel.h"
#include "core/sync/lock_guard.h"
#include "core/sync/std_mutex.h"

namespace cused::client {

// libbinder's status_t values that a binder user compares with.
inline constexpr std::int32_t kOk = 0;
inline constexpr std::int32_t kDeadObject = -32;                   // -EPIPE: BR_DEAD_REPLY
inline constexpr std::int32_t kFailedTransaction = INT32_MIN + 2;  // BR_FAILED_REPLY
inline constexpr std::int32_t kUnknownTransaction = -74;           // -EBADMSG: no such code

// One BR_TRANSACTION as a handler sees it. `data` reads the driver's buffer in place; the buffer
// is freed (BC_FREE_BUFFER) after the handler returns.
struct IncomingTransaction {
  binder_uintptr_t target = 0;
  binder_uintptr_t cookie = 0;
  std::uint32_t code = 0;
  std::uint32_t flags = 0;
  pid_t sender_pid = 0;
  uid_t sender_euid = 0;
  Parcel data;
};

// Returns kOk to send `reply`, anything else to reply with that status (TF_STATUS_CODE).
using TransactionHandler = std::function<std::int32_t(const IncomingTransaction&, Parcel& reply)>;
// Runs on BR_DEAD_BINDER with the cookie given to request_death_notification.
using DeathHandler = std::function<void(binder_uintptr_t cookie)>;

struct ProcessOptions {
  std::string device = "/dev/binder";
  std::size_t map_size = BinderDevice::kDefaultMapSize;
  std::uint32_t max_threads = 15;  // libbinder's DEFAULT_MAX_BINDER_THREADS
  // Servers reply with TF_DEFER_COMPLETE (cused's features/defer_complete).
  bool defer_complete = false;
};

class BinderProcess {
 public:
  // Opens, checks BINDER_VERSION, maps and sets the thread limit; throws std::system_error.
  explicit BinderProcess(ProcessOptions options);
  BinderProcess(const BinderProcess&) = delete;
  BinderProcess& operator=(const BinderProcess&) = delete;

  const ProcessOptions& options() const { return options_; }
  const BinderDevice& device() const { return device_; }

  // A local object served by `handler`; the value goes into Parcel::write_strong_binder as
  // binder and cookie, with object_flags(value) as its flags (libbinder's BBinder keeps its
  // scheduling flags the same way, e.g. kInheritRtObjectFlags). Objects live as long as this
  // process state.
  binder_uintptr_t add_local_object(TransactionHandler handler,
                                    std::uint32_t flags = kDefaultObjectFlags);
  // The flat_binder_object flags of a value add_local_object returned.
  std::uint32_t object_flags(binder_uintptr_t object) const;
  // BINDER_SET_CONTEXT_MGR_EXT, falling back to BINDER_SET_CONTEXT_MGR; then transactions to
  // handle 0 reach `handler`. 0 or -errno.
  int become_context_manager(TransactionHandler handler);
  void set_death_handler(DeathHandler handler);

  // The handler for a BR_TRANSACTION's target, or null.
  const TransactionHandler* handler_for(binder_uintptr_t target, binder_uintptr_t cookie) const;
  void notify_death(binder_uintptr_t cookie) const;

  // Starts one pooled looper thread (BC_ENTER_LOOPER); BR_SPAWN_LOOPER adds more
  // (BC_REGISTER_LOOPER). Pool threads are detached: a process with a pool ends with exit().
  void start_thread_pool();
  void spawn_pooled_thread(bool entered_by_user);

  // BINDER_WRITE_READ, counted.
  int write_read(binder_write_read& bwr) const;
  std::uint64_t ioctl_count() const { return ioctl_count_.load(std::memory_order_relaxed); }

 private:
  ProcessOptions options_;
  BinderDevice device_;
  mutable sync::StdMutex lock_;
  // Set before the driver delivers to it.
  TransactionHandler context_manager_ CUSED_GUARDED_BY(lock_);
  struct LocalObject {
    TransactionHandler handler;
    std::uint32_t flags;
  };
  std::deque<LocalObject> objects_ CUSED_GUARDED_BY(lock_);  // stable addresses
  DeathHandler death_handler_ CUSED_GUARDED_BY(lock_);
  mutable std::atomic<std::uint64_t> ioctl_count_{0};
};

}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
#include "client/binder_process.h"

#include <cerrno>
#include <system_error>
#include <thread>

#include "client/ipc_thread.h"

namespace cused::client {

namespace {

void throw_if_error(int result, const std::string& what) {
  if (result < 0) throw std::system_error(-result, std::generic_category(), what);
}

}  // namespace

BinderProcess::BinderProcess(ProcessOptions options)
    : options_(std::move(options)), device_(options_.device) {
  int version = device_.version();
  throw_if_error(version, "BINDER_VERSION on " + options_.device);
  if (version != BINDER_CURRENT_PROTOCOL_VERSION)
    throw std::system_error(EPROTO, std::generic_category(), "binder protocol version");
  throw_if_error(device_.map(options_.map_size), "mmap " + options_.device);
  throw_if_error(device_.set_max_threads(options_.max_threads), "BINDER_SET_MAX_THREADS");
}

binder_uintptr_t BinderProcess::add_local_object(TransactionHandler handler, std::uint32_t flags) {
  sync::LockGuard guard(lock_);
  objects_.push_back({std::move(handler), flags});
  return reinterpret_cast<binder_uintptr_t>(&objects_.back());
}

std::uint32_t BinderProcess::object_flags(binder_uintptr_t object) const {
  sync::LockGuard guard(lock_);
  return reinterpret_cast<const LocalObject*>(object)->flags;
}

int BinderProcess::become_context_manager(TransactionHandler handler) {
  {
    sync::LockGuard guard(lock_);
    context_manager_ = std::move(handler);
  }
  flat_binder_object object{};
  int result = device_.ioctl(BINDER_SET_CONTEXT_MGR_EXT, &object);
  if (result < 0 && result != -EBUSY && result != -EPERM) {
    // A driver older than 4.20 knows only the plain ioctl (its argument is ignored).
    std::int32_t unused = 0;
    result = device_.ioctl(BINDER_SET_CONTEXT_MGR, &unused);
  }
  return result;
}

void BinderProcess::set_death_handler(DeathHandler handler) {
  sync::LockGuard guard(lock_);
  death_handler_ = std::move(handler);
}

// The driver hands back the binder/cookie pair this process flattened (add_local_object), or 0
// for the context manager's node. The handler was published through the driver, which orders it
// for the CPU but not for ThreadSanitizer; taking the lock it was stored under orders it for both.
const TransactionHandler* BinderProcess::handler_for(binder_uintptr_t target,
                                                     binder_uintptr_t cookie) const {
  sync::LockGuard guard(lock_);
  if (target == 0 && cookie == 0) return context_manager_ ? &context_manager_ : nullptr;
  return &reinterpret_cast<const LocalObject*>(cookie)->handler;
}

void BinderProcess::notify_death(binder_uintptr_t cookie) const {
  DeathHandler handler;
  {
    sync::LockGuard guard(lock_);
    handler = death_handler_;
  }
  if (handler) handler(cookie);
}

void BinderProcess::start_thread_pool() { spawn_pooled_thread(true); }

void BinderProcess::spawn_pooled_thread(bool entered_by_user) {
  std::thread([this, entered_by_user] {
    IpcThread thread(*this);
    thread.join_looper(entered_by_user);
  }).detach();
}

int BinderProcess::write_read(binder_write_read& bwr) const {
  ioctl_count_.fetch_add(1, std::memory_order_relaxed);
  return device_.write_read(bwr);
}

}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
// The daemon's side of `cused run` (docs/run.md): a unix socket that takes programs' seccomp
// listeners (uapi/cused_run.h), and worker threads that serve their notified ioctls. An ioctl on
// one of the mount's binder nodes goes to core with the kernel's argument handling (exactly what
// binder_ioctl copies, core/ioctl_argument.h) and a completion that answers the notification
// (notification_completion.h); any other notified ioctl continues in the kernel untouched.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/sync/mutex.h"
#include "cused/devices/device_registry.h"
#include "cused/request/blocking_workers.h"
#include "cused/request/interrupt_worker.h"
#include "cused/request/signal_watcher.h"
#include "cused/run/fd_resolver.h"
#include "cused/run/session.h"
#include "cused/run/vma_rules.h"
#include "cused/thread_groups.h"

namespace cused::run {

// Where a daemon serving the mount with device number `dev` listens.
std::string socket_path_for(dev_t dev);

// The name of the threads that receive programs' notifications.
inline constexpr char kReceiverThreadName[] = "cused-receive";

class RunServer {
 public:
  // Serves the opens of `registry`'s devices on the mount whose device number is `mount_device`:
  // listens on socket_path_for(mount_device); each program is served by
  // `receivers` threads of its own (0: one per CPU, at least 2), one at a time blocked in
  // SECCOMP_IOCTL_NOTIF_RECV (receive_turns.h): a notification costs one system call to
  // receive, none to arm, and wakes one thread.
  // Throws std::system_error when the socket cannot be made.
  RunServer(devices::DeviceRegistry& registry, dev_t mount_device, unsigned receivers = 0);
  // Stops serving: every program's listener is closed, so its pending and later binder ioctls
  // fail with ENOSYS (the kernel's answer when a listener goes away) instead of hanging.
  ~RunServer();
  RunServer(const RunServer&) = delete;
  RunServer& operator=(const RunServer&) = delete;

  const std::string& socket_path() const { return socket_path_; }
  std::size_t sessions() const CUSED_EXCLUDES(lock_);
  // ioctls served through notifications so far (tests, stats).
  std::uint64_t served() const { return served_.load(std::memory_order_relaxed); }
  // Takes a listener as if a launcher had sent it (tests).
  void attach(int listener_fd, pid_t root) CUSED_EXCLUDES(lock_);

 private:
  // A program being served: its session, and the threads that receive its notifications.
  struct Served {
    std::shared_ptr<Session> session;
    BlockingWorkers receivers;
  };
  // Accepts attaches, and drops a program once no task is left under its filter (its listener
  // reports EPOLLHUP).
  void run_control() CUSED_EXCLUDES(lock_);
  void accept_attach();
  void receive(const std::shared_ptr<Session>& session, const std::atomic<bool>& stopping);
  void handle(const std::shared_ptr<Session>& session, const seccomp_notif& notification);
  void close_binder_mappings(pid_t tid, std::uint64_t start, std::uint64_t length);
  // binder_mmap's refusal of the notified mmap, or 0 to let the kernel run it (vma_rules.h).
  int binder_mmap_refusal(pid_t tid, int fd, const MmapCall& call);
  // -EACCES for an mprotect adding PROT_WRITE to a binder mapping, or 0.
  int mprotect_refusal(pid_t tid, std::uint64_t start, std::uint64_t length);
  void drop(std::uint64_t key) CUSED_EXCLUDES(lock_);

  devices::DeviceRegistry& registry_;
  std::string socket_path_;
  int socket_fd_ = -1;
  int epoll_fd_ = -1;
  int stop_fd_ = -1;
  InterruptWorker interrupts_;
  SignalWatcher signals_;
  FdResolver resolver_;
  ThreadGroups thread_groups_;
  std::atomic<std::uint64_t> served_{0};
  const unsigned receivers_per_program_;
  mutable sync::Mutex lock_;
  std::map<std::uint64_t, std::unique_ptr<Served>> served_programs_ CUSED_GUARDED_BY(lock_);
  std::uint64_t next_key_ CUSED_GUARDED_BY(lock_) = 2;  // 0: stop, 1: the socket
  std::thread control_;
};

}  // namespace cused::run

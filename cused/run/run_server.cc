// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/run_server.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "client/fd_message.h"
#include "core/ioctl_argument.h"
#include "core/proc.h"
#include "core/sync/lock_guard.h"
#include "cused/process_memory.h"
#include "cused/request/caller_scheduling.h"
#include "cused/request/failures.h"
#include "cused/run/argument_copy.h"
#include "cused/run/notification_completion.h"
#include "cused/run/seccomp_filter.h"
#include "cused/run/vma_rules.h"
#include "uapi/binder.h"
#include "uapi/cused_run.h"

namespace cused::run {

namespace {

constexpr std::uint64_t kStopKey = 0;

// mmap(addr, length, prot, flags, fd, offset)'s arguments.
using SyscallArguments = decltype(seccomp_data::args);
MmapCall mmap_call(const SyscallArguments& args) {
  return {args[1], static_cast<int>(args[2]), static_cast<int>(args[3]), args[5]};
}
int fd_of_mmap(const SyscallArguments& args) { return static_cast<int>(args[4]); }
constexpr std::uint64_t kSocketKey = 1;

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "cused run: " + what);
}

int listen_on(const std::string& path) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) fail("socket");
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) fail("socket path too long: " + path);
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  unlink(path.c_str());  // left by a daemon that died
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      chmod(path.c_str(), 0600) != 0 || listen(fd, 16) != 0) {
    int err = errno;
    close(fd);
    errno = err;
    fail("listen on " + path);
  }
  return fd;
}

void add_to_epoll(int epoll_fd, int fd, std::uint64_t key, std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.u64 = key;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) fail("epoll_ctl");
}

constexpr int kAttachLimitSeconds = 5;

// Receives one RunAttach with its listener; -1 when the message is not one.
int receive_attach(int connection, uapi::RunAttach& attach) {
  int listener = -1;
  ssize_t got = client::receive_with_fd(connection, &attach, sizeof attach, listener);
  if (got != static_cast<ssize_t>(sizeof attach) || attach.magic != uapi::kRunMagic) {
    if (listener >= 0) close(listener);
    return -1;
  }
  return listener;
}

void reply_attach(int connection, int error) {
  uapi::RunAttachReply reply{uapi::kRunMagic, error};
  [[maybe_unused]] auto sent = send(connection, &reply, sizeof reply, MSG_NOSIGNAL);
}

}  // namespace

std::string socket_path_for(dev_t dev) {
  return fmt::format("{}/mount-{}:{}.sock", uapi::kRunSocketDir, major(dev), minor(dev));
}

RunServer::RunServer(devices::DeviceRegistry& registry, dev_t mount_device, unsigned receivers)
    : registry_(registry),
      socket_path_(socket_path_for(mount_device)),
      resolver_(registry),
      receivers_per_program_(receivers ? receivers
                                       : std::max(2u, std::thread::hardware_concurrency())) {
  socket_fd_ = listen_on(socket_path_);
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || stop_fd_ < 0) fail("epoll");
  add_to_epoll(epoll_fd_, stop_fd_, kStopKey, EPOLLIN);
  add_to_epoll(epoll_fd_, socket_fd_, kSocketKey, EPOLLIN);
  registry_.set_close_observer([this](const core::Proc& proc) { resolver_.forget(proc); });
  control_ = std::thread([this] { run_control(); });
}

RunServer::~RunServer() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto written = write(stop_fd_, &one, sizeof one);
  control_.join();
  registry_.set_close_observer({});
  std::map<std::uint64_t, std::unique_ptr<Served>> programs;
  {
    sync::LockGuard guard(lock_);
    programs.swap(served_programs_);
  }
  for (auto& [key, served] : programs) {
    // Parked reads' completions may hold a session past this: its listener is closed now all
    // the same, so that no program waits for a daemon that is going.
    served->session->listener.close_for_programs();
    served->session->turns.release_all();
    served->receivers.stop();
  }
  close(socket_fd_);
  unlink(socket_path_.c_str());
  close(stop_fd_);
  close(epoll_fd_);
}

std::size_t RunServer::sessions() const {
  sync::LockGuard guard(lock_);
  return served_programs_.size();
}

void RunServer::attach(int listener_fd, pid_t root) {
  auto served = std::make_unique<Served>();
  served->session = std::make_shared<Session>(listener_fd, root, interrupts_, signals_);
  served->session->listener.wake_synchronously();  // a faster round trip where the kernel has it
  std::shared_ptr<Session> session = served->session;
  served->receivers.start(receivers_per_program_, [this, session](const std::atomic<bool>& stop) {
    receive(session, stop);
  });
  std::uint64_t key;
  {
    sync::LockGuard guard(lock_);
    key = next_key_++;
    served_programs_.emplace(key, std::move(served));
  }
  // No events asked for: EPOLLHUP, when the last task under the filter is gone, always comes.
  add_to_epoll(epoll_fd_, listener_fd, key, 0);
}

void RunServer::run_control() {
  for (;;) {
    epoll_event event{};
    int ready = epoll_wait(epoll_fd_, &event, 1, -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0 || event.data.u64 == kStopKey) return;
    if (event.data.u64 == kSocketKey)
      run_guarded(
          RequestEntry::kRun, "attach", [&] { accept_attach(); }, [](int) {});
    else
      drop(event.data.u64);
  }
}

void RunServer::receive(const std::shared_ptr<Session>& session,
                        const std::atomic<bool>& stopping) {
  pthread_setname_np(pthread_self(), kReceiverThreadName);  // for perf, top, and the tests
  if (!session->turns.take()) return;  // the receivers stop before this one's turn came
  while (!stopping.load(std::memory_order_acquire)) {
    std::optional<seccomp_notif> notification = session->listener.receive();
    if (!notification) {
      // EINTR: woken to stop (or by chance); ENOENT: the notification's task went away.
      if (errno == EINTR || errno == ENOENT) continue;
      session->turns.release_all();  // the listener is closed: nobody else waits for it either
      return;
    }
    session->turns.received_from(static_cast<pid_t>(notification->pid));
    run_guarded(
        RequestEntry::kRun, "ioctl", [&] { handle(session, *notification); },
        [&](int err) { session->listener.answer(notification->id, -err); });
  }
}

void RunServer::drop(std::uint64_t key) {
  std::unique_ptr<Served> served;
  {
    sync::LockGuard guard(lock_);
    auto it = served_programs_.find(key);
    if (it == served_programs_.end()) return;
    served = std::move(it->second);
    served_programs_.erase(it);
  }
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, served->session->listener.fd(), nullptr);
  served->session->turns.release_all();
  served->receivers.stop();
}

void RunServer::accept_attach() {
  for (;;) {
    int connection = accept4(socket_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) return;  // EAGAIN: none left
    // A peer that connects and sends nothing must not hold up the attaches after it, nor the
    // daemon's stop (which joins this thread); a launcher sends within milliseconds.
    timeval limit{kAttachLimitSeconds, 0};
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ucred peer{};
    socklen_t size = sizeof peer;
    uapi::RunAttach message{};
    int listener = -1;
    if (getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 &&
        (peer.uid == 0 || peer.uid == geteuid()))
      listener = receive_attach(connection, message);
    if (listener < 0) {
      reply_attach(connection, EPERM);
    } else {
      attach(listener, message.pid);
      reply_attach(connection, 0);
    }
    close(connection);
  }
}

// The kernel's vma close (binder_vma_close, S1.6, S11.9): unmapping or moving any part of a
// proc's buffer space ends it; later calls to the proc fail (BR_DEAD_REPLY), its buffers can
// still be freed. Done before the kernel runs the call: a munmap that then fails (a bad
// address) cannot overlap a mapping that exists.
void RunServer::close_binder_mappings(pid_t tid, std::uint64_t start, std::uint64_t length) {
  pid_t tgid = thread_groups_.of(tid);
  if (!tgid) return;
  for (const auto& proc : registry_.procs_of(tgid)) {
    core::alloc::Allocator& space = proc->allocator();
    std::uint64_t begin = space.vm_start(), end = begin + space.size();
    if (space.is_mapped() && start < end && begin - std::min(begin, start) < length) space.unmap();
  }
}

// The filter notifies writable mmaps of files (seccomp_filter.h): binder_mmap's answer when the
// file is one of this mount's binder nodes (S1.4, vma_rules.h), else 0 and the kernel maps it.
int RunServer::binder_mmap_refusal(pid_t tid, int fd, const MmapCall& call) {
  pid_t tgid = thread_groups_.of(tid);
  // Every descriptor is looked at, also in a process with no node open of its own: a node
  // inherited or passed from its opener is binder_mmap's EINVAL, and a writable mapping of it
  // would reach the opener's buffers.
  FdResolver::Resolved open = tgid ? resolver_.resolve(tgid, tid, fd) : FdResolver::Resolved{};
  if (!open.proc) return 0;
  return binder_mmap_answer(call, descriptor_access_mode(tid, fd), open.proc->pid() == tgid);
}

// The filter notifies mprotects that add PROT_WRITE: EACCES when the range reaches one of the
// process's binder mappings, whose VM_MAYWRITE binder_mmap cleared (S1.4).
int RunServer::mprotect_refusal(pid_t tid, std::uint64_t start, std::uint64_t length) {
  pid_t tgid = thread_groups_.of(tid);
  if (!tgid) return 0;
  for (const auto& proc : registry_.procs_of(tgid)) {
    if (!proc->ensure_mapped()) continue;
    core::alloc::Allocator& space = proc->allocator();
    if (mprotect_reaches(start, length, space.vm_start(), space.vm_start() + space.size()))
      return -EACCES;
  }
  return 0;
}

void RunServer::handle(const std::shared_ptr<Session>& session, const seccomp_notif& notification) {
  const Listener& listener = session->listener;
  const auto& args = notification.data.args;
  const int fd = static_cast<int>(args[0]);
  const unsigned cmd = static_cast<unsigned>(args[1]);
  const std::uint64_t arg = args[2];
  const pid_t tid = static_cast<pid_t>(notification.pid);
  if (notification.data.nr == __NR_munmap || notification.data.nr == __NR_mremap) {
    close_binder_mappings(tid, args[0], args[1]);
    listener.continue_syscall(notification.id);
    return;
  }
  if (notification.data.nr == __NR_mmap || notification.data.nr == __NR_mprotect) {
    const int refusal = notification.data.nr == __NR_mmap
                            ? binder_mmap_refusal(tid, fd_of_mmap(args), mmap_call(args))
                            : mprotect_refusal(tid, args[0], args[1]);
    if (refusal != 0)
      listener.answer(notification.id, refusal);
    else
      listener.continue_syscall(notification.id);
    return;
  }
  if (notification.data.nr != __NR_ioctl || !notified_ioctl(cmd)) {
    listener.continue_syscall(notification.id);
    return;
  }
  pid_t tgid = thread_groups_.of(tid);
  FdResolver::Resolved open = tgid ? resolver_.resolve(tgid, tid, fd) : FdResolver::Resolved{};
  if (!open.proc) {
    // Not one of this mount's binder nodes: the kernel serves it as if there were no filter.
    listener.continue_syscall(notification.id);
    return;
  }
  // Exactly what binder_ioctl copies in; a failed copy reaches core as an empty argument, which
  // answers with the kernel's errno for that command. A binder_write_read's commands come along.
  core::IoctlArgument argument = core::kernel_ioctl_argument(cmd);
  ProcessMemory caller(tid);
  ArgumentCopy in(
      caller, arg, argument.copy_in,
      cmd == BINDER_WRITE_READ ? open.proc->read_ahead_hint(tid) : core::ReadAheadHint{});
  // The tid names the caller only while its notification waits: a pid can be reused once its
  // process is gone, and what was read must be the caller's.
  if (!listener.valid(notification.id)) return;
  served_.fetch_add(1, std::memory_order_relaxed);
  core::IoctlRequest request{tgid,          tid,           open.proc->euid(), cmd,
                             in.argument(), open.nonblock, in.read_ahead(),   arg};
  auto completion = std::make_unique<NotificationCompletion>(session, notification.id, tid, tgid,
                                                             arg, argument, open.proc);
  CallerScheduling scheduling(tid, serves_at_caller_priority(*open.proc));
  open.proc->ioctl(request, std::move(completion));
}

}  // namespace cused::run

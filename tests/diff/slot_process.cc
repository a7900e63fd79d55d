// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/slot_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <latch>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "client/return_stream.h"
#include "tests/diff/trace.h"
#include "tests/diff/wire.h"
#include "tests/fuzz/command_encoder.h"
#include "tests/fuzz/script.h"

namespace cused::diff {

namespace {

using fuzz::Op;
using fuzz::ScriptInput;

// The slot's fds: 0-15 are open files (FD objects name them, as the fuzzer's file table does),
// so the first fd the driver installs here is 16 on every path; its own fds sit far above.
constexpr int kFirstFreeFd = 16;
constexpr int kSocketFd = 200, kDeviceFd = 201;

int checked(int ret) { return ret < 0 ? -errno : ret; }

class Slot {
 public:
  Slot(int socket, const SlotOptions& options) : socket_(socket) {
    if (options.space) {
      void* at = ::mmap(nullptr, options.space, PROT_READ, MAP_PRIVATE, kDeviceFd, 0);
      map_result_ = at == MAP_FAILED ? -errno : 0;
      if (at != MAP_FAILED) space_ = {static_cast<const std::byte*>(at), options.space};
    }
    std::latch started(fuzz::kThreads);
    for (int t = 0; t < fuzz::kThreads; t++) {
      workers_[t] = std::thread([this, t, &started] {
        tids_[t] = ::gettid();
        started.count_down();
        work(t);
      });
    }
    started.wait();
  }

  int map_result() const { return map_result_; }

  // "ids TID0 TID1 TID2 TID3 base 0x7f..": who the coordinator will find in the driver's state.
  std::string ids() const {
    return fmt::format("ids {} base {:#x}", fmt::join(tids_, " "),
                       reinterpret_cast<std::uintptr_t>(space_.base));
  }

  // Until the coordinator closes its end (or kills us).
  [[noreturn]] void serve() {
    while (auto step = receive_step(socket_)) dispatch(std::move(*step));
    ::_exit(0);
  }

 private:
  struct Queue {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<StepMessage> steps;
  };

  void dispatch(StepMessage step) {
    ScriptInput in(step.bytes);
    auto op = static_cast<Op>(in.u8() % static_cast<std::uint8_t>(Op::kCount));
    in.u8();  // slot
    switch (op) {
      case Op::kFlush: {
        // The kernel calls binder_flush on every close of one of the file's fds.
        int dup = ::dup(kDeviceFd);
        int ret = checked(::close(dup));
        return answer(step.step, 0, "flush ret " + result_text(ret));
      }
      case Op::kUnmap: {
        std::unique_lock lock(space_mutex_);
        int ret = space_.base ? checked(::munmap(const_cast<std::byte*>(space_.base), space_.size))
                              : -EINVAL;
        space_ = {.was_mapped = true};
        return answer(step.step, 0, "munmap ret " + result_text(ret));
      }
      case Op::kInterrupt: {
        int thread = in.u8() % fuzz::kThreads;
        ::pthread_kill(workers_[thread].native_handle(), SIGUSR1);
        return;  // the parked call answers with EINTR
      }
      default: {
        int thread = in.u8() % fuzz::kThreads;
        Queue& queue = queues_[thread];
        std::lock_guard lock(queue.mutex);
        queue.steps.push_back(std::move(step));
        queue.ready.notify_one();
      }
    }
  }

  void answer(std::uint32_t step, int thread, std::string line) {
    if (!send_result(socket_, {step, static_cast<std::uint8_t>(thread), std::move(line)}))
      ::_exit(0);
  }

  void work(int thread) {
    Queue& queue = queues_[thread];
    for (;;) {
      StepMessage step;
      {
        std::unique_lock lock(queue.mutex);
        queue.ready.wait(lock, [&] { return !queue.steps.empty(); });
        step = std::move(queue.steps.front());
        queue.steps.pop_front();
      }
      answer(step.step, thread, execute(step));
    }
  }

  std::string execute(const StepMessage& step) {
    ScriptInput in(step.bytes);
    auto op = static_cast<Op>(in.u8() % static_cast<std::uint8_t>(Op::kCount));
    in.u8();  // slot
    in.u8();  // thread
    switch (op) {
      case Op::kContextMgr:
        return "context_mgr " + simple(BINDER_SET_CONTEXT_MGR);
      case Op::kThreadExit:
        return "thread_exit " + simple(BINDER_THREAD_EXIT);
      case Op::kPoll: {
        pollfd p{kDeviceFd, POLLIN, 0};
        int ret = checked(::poll(&p, 1, 0));
        return fmt::format("poll ret {} revents {:#x}", result_text(ret), p.revents);
      }
      case Op::kIoctl:
        return other_ioctl(in);
      case Op::kWriteRead:
        return write_read(in, true);
      case Op::kRead:
        return write_read(in, false);
      default:
        return fmt::format("op {} not a thread's", static_cast<int>(op));
    }
  }

  static std::string simple(unsigned cmd) {
    std::int32_t zero = 0;
    return "ret " + result_text(checked(::ioctl(kDeviceFd, cmd, &zero)));
  }

  static std::string other_ioctl(ScriptInput& in) {
    fuzz::ScriptIoctl call = in.ioctl();
    int ret = checked(::ioctl(kDeviceFd, call.cmd, call.arg.data()));
    return fmt::format("ioctl {:#x} {}", call.cmd, render_ioctl(call.cmd, ret, call.argument()));
  }

  std::string write_read(ScriptInput& in, bool with_commands) {
    std::uint8_t read_mode = in.u8();
    std::vector<std::byte> commands;
    binder_write_read bwr{};
    {
      std::lock_guard lock(client_mutex_);
      if (with_commands) {
        int count = in.u8() % 8;
        std::shared_lock space(space_mutex_);
        fuzz::CommandEncoder encoder(memory_, owed_, reinterpret_cast<std::uint64_t>(space_.base));
        for (int i = 0; i < count; i++) encoder.command(in, commands);
      }
      std::size_t read_size = fuzz::read_size(read_mode);
      bwr.write_size = commands.size();
      bwr.write_buffer = memory_.place(commands.data(), commands.size());
      bwr.read_size = read_size;
      bwr.read_buffer = memory_.reserve(read_size);
    }
    int ret = checked(::ioctl(kDeviceFd, BINDER_WRITE_READ, &bwr));
    std::span<const std::byte> read(reinterpret_cast<const std::byte*>(bwr.read_buffer),
                                    std::min<std::size_t>(bwr.read_consumed, bwr.read_size));
    std::string line;
    {
      std::lock_guard lock(client_mutex_);
      client::for_each_return(read, [&](const client::ReturnItem& item) { owed_.record(item); });
      std::shared_lock space(space_mutex_);
      line = (with_commands ? "write_read" + render_commands(commands) + " | " : "read ") +
             render_write_read(ret, bwr, read, space_);
    }
    // What the driver recorded about the last failure (S4.13), read the same way on every path.
    binder_extended_error ee{};
    int ee_ret = checked(::ioctl(kDeviceFd, BINDER_GET_EXTENDED_ERROR, &ee));
    return line + " | " +
           render_ioctl(BINDER_GET_EXTENDED_ERROR, ee_ret, std::as_bytes(std::span(&ee, 1)));
  }

  const int socket_;
  int map_result_ = 0;
  std::shared_mutex space_mutex_;  // munmap against rendering a delivered buffer
  BufferSpace space_;
  std::mutex client_mutex_;              // the slot's memory and follow-ups, shared by its threads
  fuzz::ClientMemory memory_{8u << 20};  // command streams, parcels, read buffers
  client::FollowUps owed_;
  std::array<Queue, fuzz::kThreads> queues_;
  std::array<std::thread, fuzz::kThreads> workers_;
  std::array<pid_t, fuzz::kThreads> tids_{};
};

void interrupted(int) {}

// fds 0-15 open, the socket and the device high up, nothing in between.
int arrange_fds(int socket, const std::string& device, bool nonblock) {
  if (::dup2(socket, kSocketFd) < 0) return -errno;
  ::close_range(3, kSocketFd - 1, 0);
  ::close_range(kSocketFd + 1, ~0u, 0);
  for (int fd = 3; fd < kFirstFreeFd; fd++) ::open("/dev/null", O_RDONLY);
  int fd = ::open(device.c_str(), O_RDWR | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
  if (fd < 0) return -errno;
  ::dup2(fd, kDeviceFd);
  ::close(fd);
  return 0;
}

}  // namespace

void run_slot(int socket, const SlotOptions& options) {
  struct sigaction action {};
  action.sa_handler = interrupted;  // no SA_RESTART: a parked read ends with EINTR
  ::sigaction(SIGUSR1, &action, nullptr);
  int open_result = arrange_fds(socket, options.device, options.nonblock);
  if (open_result < 0) {
    send_result(kSocketFd, {0, 0, "open ret " + result_text(open_result)});
    ::_exit(0);
  }
  static Slot slot(kSocketFd, options);  // lives until _exit: its threads never return
  send_result(kSocketFd, {0, 0, fmt::format("open ret 0 map {}", result_text(slot.map_result()))});
  send_result(kSocketFd, {0, 0, slot.ids()});
  slot.serve();
}

}  // namespace cused::diff

// SPDX-License-Identifier: GPL-2.0-only
// Fault injection against a mounted cused (issue 8): clients SIGKILLed at random points of their
// transactions, a target that unmaps its buffer space while peers send (S11.9), threads that
// exit with work queued (S11.6), and tools/binder-fuzz's live rounds. Whatever the clients do,
// the daemon stays up, callers get binder's answers, and nothing is left behind: no open proc,
// no file descriptor (the daemon runs in this process, so its memfds are ours to count).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "core/proc.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"

namespace cused {
namespace {

using client::BinderDevice;
using testing::MountedBinderfs;

std::size_t count_open_fds() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
    ++count;
  return count;
}

// One BINDER_WRITE_READ of `commands`; returns the BR_ codes read (with their payloads skipped)
// and, through `buffers`, the buffers delivered.
std::vector<std::uint32_t> write_read(const BinderDevice& device,
                                      const std::vector<std::byte>& commands,
                                      std::vector<binder_uintptr_t>* buffers = nullptr,
                                      int* result = nullptr) {
  std::vector<std::byte> read(256);
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
  bwr.write_size = commands.size();
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(read.data());
  bwr.read_size = read.size();
  int ret = device.write_read(bwr);
  if (result) *result = ret;
  std::vector<std::uint32_t> codes;
  for (std::size_t pos = 0; pos + 4 <= bwr.read_consumed;) {
    std::uint32_t cmd;
    std::memcpy(&cmd, read.data() + pos, 4);
    pos += 4;
    if ((cmd == BR_TRANSACTION || cmd == BR_REPLY) && buffers) {
      binder_transaction_data tr;
      std::memcpy(&tr, read.data() + pos, sizeof tr);
      buffers->push_back(tr.data.ptr.buffer);
    }
    pos += _IOC_SIZE(cmd);
    codes.push_back(cmd);
  }
  return codes;
}

template <typename T>
void put(std::vector<std::byte>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

// BC_FREE_BUFFER for each of `buffers`.
void free_all(const BinderDevice& device, const std::vector<binder_uintptr_t>& buffers) {
  std::vector<std::byte> commands;
  for (binder_uintptr_t buffer : buffers) {
    put(commands, BC_FREE_BUFFER);
    put(commands, buffer);
  }
  if (!commands.empty()) write_read(device, commands);
}

// A call to handle 0 carrying one local binder object (the manager gets a ref to it).
std::vector<std::byte> call_manager(std::uint32_t flags, const flat_binder_object& object) {
  binder_transaction_data tr{};
  tr.flags = flags;
  tr.data_size = sizeof object;
  tr.offsets_size = sizeof(binder_size_t);
  static const binder_size_t kOffset = 0;
  tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(&object);
  tr.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(&kOffset);
  std::vector<std::byte> out;
  put(out, BC_TRANSACTION);
  put(out, tr);
  return out;
}

// The context manager: answers every call with an empty reply and frees what it got, until
// killed. `unmap` first unmaps its buffer space (S11.9).
[[noreturn]] void serve_as_manager(const std::string& path, int ready_fd, bool unmap) {
  BinderDevice device(path);
  device.map();
  std::int32_t zero = 0;
  char ok = device.ioctl(BINDER_SET_CONTEXT_MGR, &zero) == 0;
  if (unmap) munmap(const_cast<std::byte*>(device.mapping()), device.mapping_size());
  [[maybe_unused]] auto written = write(ready_fd, &ok, 1);
  for (;;) {
    std::vector<binder_uintptr_t> buffers;
    auto codes = write_read(device, {}, &buffers);
    std::vector<std::byte> answer;
    for (std::size_t i = 0; i < codes.size(); i++) {
      if (codes[i] != BR_TRANSACTION) continue;
      binder_transaction_data reply{};
      put(answer, BC_REPLY);
      put(answer, reply);
    }
    for (binder_uintptr_t buffer : buffers) {
      put(answer, BC_FREE_BUFFER);
      put(answer, buffer);
    }
    if (!answer.empty()) write_read(device, answer);
  }
}

class Faults : public ::testing::Test {
 protected:
  void SetUp() override { baseline_fds_ = count_open_fds(); }

  pid_t start_manager(bool unmap) {
    int ready[2];
    EXPECT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) serve_as_manager(mount_.path("binder"), ready[1], unmap);
    close(ready[1]);
    char ok = 0;
    EXPECT_EQ(read(ready[0], &ok, 1), 1);
    close(ready[0]);
    EXPECT_EQ(ok, 1);
    return pid;
  }

  // Nothing of the clients is left: no proc, no fd (memfds included), and the mount answers.
  void expect_clean() {
    EXPECT_TRUE(mount_.wait_for_open_procs(0)) << mount_.registry().open_procs() << " procs";
    for (int i = 0; i < 200 && count_open_fds() != baseline_fds_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(count_open_fds(), baseline_fds_);
    BinderDevice device(mount_.path("binder"));
    EXPECT_EQ(device.version(), BINDER_CURRENT_PROTOCOL_VERSION);
  }

  MountedBinderfs mount_;
  std::size_t baseline_fds_ = 0;
};

// Clients calling the manager with objects, SIGKILLed at random points (S1.9, S11.6, S11.8):
// every answer they saw was binder's, and once all are dead nothing is left.
TEST_F(Faults, ClientsKilledMidTransaction_S1_9_S11_6) {
  std::mt19937 rng(20261130);
  for (int round = 0; round < 4; round++) {
    SCOPED_TRACE(round);
    pid_t manager = start_manager(false);
    std::vector<pid_t> clients;
    for (int c = 0; c < 4; c++) {
      pid_t pid = fork();
      if (pid == 0) {
        BinderDevice device(mount_.path("binder"));
        device.map();
        flat_binder_object object{};
        object.hdr.type = BINDER_TYPE_BINDER;
        for (std::uint64_t i = 0;; i++) {
          object.binder = 0x1000 * (1 + i % 4);
          int ret = 0;
          std::vector<binder_uintptr_t> buffers;
          write_read(device, call_manager(i % 3 ? 0 : TF_ONE_WAY, object), &buffers, &ret);
          if (ret != 0 && ret != -EINTR && ret != -EAGAIN) _exit(10);  // not binder's answer
          free_all(device, buffers);
        }
      }
      clients.push_back(pid);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + rng() % 200));
    for (pid_t pid : clients) {
      kill(pid, SIGKILL);
      int status = 0;
      waitpid(pid, &status, 0);
      EXPECT_TRUE(WIFSIGNALED(status)) << "client exited by itself: " << WEXITSTATUS(status);
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
    }
    kill(manager, SIGKILL);
    waitpid(manager, nullptr, 0);
    expect_clean();
  }
}

// S11.9: the manager unmaps its buffer space while a client keeps calling it. The kernel answers
// BR_DEAD_REPLY once the vma is gone; cused cannot see a munmap (docs/design.md section 2)
// and keeps delivering into the memfd. Either way: the caller gets a binder answer, the daemon
// stays up.
TEST_F(Faults, ManagerUnmapsWhilePeersSend_S11_9) {
  pid_t manager = start_manager(true);
  {
    BinderDevice device(mount_.path("binder"));
    ASSERT_EQ(device.map(), 0);
    flat_binder_object object{};
    object.hdr.type = BINDER_TYPE_BINDER;
    object.binder = 0x1000;
    for (int i = 0; i < 50; i++) {
      int ret = 0;
      std::vector<binder_uintptr_t> buffers;
      auto codes = write_read(device, call_manager(0, object), &buffers, &ret);
      ASSERT_EQ(ret, 0);
      auto is_answer = [](std::uint32_t code) {
        return code == BR_REPLY || code == BR_DEAD_REPLY || code == BR_FAILED_REPLY;
      };
      // Wait for the answer when the first read returned only the completion.
      if (std::none_of(codes.begin(), codes.end(), is_answer))
        codes = write_read(device, {}, &buffers);
      EXPECT_TRUE(std::any_of(codes.begin(), codes.end(), is_answer)) << "call " << i;
      free_all(device, buffers);
    }
  }
  kill(manager, SIGKILL);
  waitpid(manager, nullptr, 0);
  expect_clean();
}

// S11.6: a thread asks for a death notification on the manager, the manager dies (BR_DEAD_BINDER
// queued), and the thread exits and the proc closes without reading it.
TEST_F(Faults, ThreadExitsWithQueuedDeath_S11_6) {
  pid_t manager = start_manager(false);
  {
    BinderDevice device(mount_.path("binder"));
    ASSERT_EQ(device.map(), 0);
    write_read(device, {});  // a new thread's first read returns at once (S2.0)
    std::vector<std::byte> commands;
    put(commands, BC_INCREFS);
    put(commands, std::uint32_t{0});
    put(commands, BC_REQUEST_DEATH_NOTIFICATION);
    put(commands, binder_handle_cookie{0, 0x77});
    binder_write_read bwr{};  // write only: a read would wait for the death
    bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
    bwr.write_size = commands.size();
    ASSERT_EQ(device.write_read(bwr), 0);
    kill(manager, SIGKILL);
    waitpid(manager, nullptr, 0);
    // FUSE sends the dead manager's RELEASE after its exit, and only that release queues the
    // BR_DEAD_BINDER: the thread must exit once it is queued, which is what this test is about.
    auto queued_work = [&] {
      std::size_t todo = 0;
      mount_.registry().for_each_proc_of(getpid(),
                                         [&](core::Proc& proc) { todo += proc.counts().todo; });
      return todo;
    };
    ASSERT_TRUE(testing::wait_until([&] { return queued_work() == 1; })) << queued_work();
    std::int32_t zero = 0;
    EXPECT_EQ(device.ioctl(BINDER_THREAD_EXIT, &zero), 0);
  }
  expect_clean();
}

// tools/binder-fuzz against this mount: rounds of random streams with self-kills pass, and leave
// nothing behind (S1.9: a released proc's buffer file and pages go with it).
TEST_F(Faults, BinderFuzzRoundsPassAndLeaveNothing) {
  {
    testing::ToolProcess fuzz({testing::binary_from_env("BINDER_FUZZ_BINARY"), "--dev",
                               mount_.path("binder"), "--seed", "7", "--rounds", "3", "--procs",
                               "3", "--threads", "2", "--steps", "60", "--daemon-pid",
                               std::to_string(getpid())});
    auto result = fuzz.finish(std::chrono::seconds(90));
    ASSERT_FALSE(result.timed_out) << result.output;
    EXPECT_TRUE(WIFEXITED(result.status) && WEXITSTATUS(result.status) == 0) << result.output;
    EXPECT_NE(result.output.find("3 rounds"), std::string::npos) << result.output;
    // The daemon (this process) held no more fds or memfd pages after rounds 1 and 2 than after
    // round 0: every buffer file of a killed or exited proc was closed.
    EXPECT_NE(result.output.find("daemon pid"), std::string::npos) << result.output;
    EXPECT_NE(result.output.find(" ok"), std::string::npos)
        << "no ioctl answered: " << result.output;
    EXPECT_NE(result.output.find("0 failed rounds"), std::string::npos) << result.output;
  }  // the tool's stdout pipe is closed here
  expect_clean();
}

}  // namespace
}  // namespace cused

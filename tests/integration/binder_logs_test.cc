// SPDX-License-Identifier: GPL-2.0-only
// binder_logs/ (S10.6) and the directory operations (S10.4) through a mounted binderfs: what a
// user reading the files or renaming devices sees.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "client/binder_device.h"
#include "core/device_variant.h"
#include "tests/binder_logs_text.h"
#include "tests/integration/file_contents.h"
#include "tests/integration/mounted_binderfs.h"
#include "uapi/binder.h"

namespace cused {
namespace {

using client::BinderDevice;
using testing::MountedBinderfs;

using testing::list_dir;
using testing::proc_block;
using testing::read_file;
using testing::value_of;

int rename2(const std::string& from, const std::string& to, unsigned flags) {
  return static_cast<int>(
      syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags));
}

// BC_TRANSACTION to handle 0: with no context manager it fails (BR_DEAD_REPLY, S4.1).
void call_handle_zero(const BinderDevice& device) {
  struct __attribute__((packed)) {
    std::uint32_t cmd = BC_TRANSACTION;
    binder_transaction_data tr{};
  } write;
  write.tr.code = 7;
  std::uint32_t read[32];
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(&write);
  bwr.write_size = sizeof write;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(read);
  bwr.read_size = sizeof read;
  ASSERT_EQ(device.write_read(bwr), 0);
}

class BinderLogsTest : public ::testing::Test {
 protected:
  std::string logs(const std::string& name) {
    return read_file(mount_.path("binder_logs/" + name));
  }
  MountedBinderfs mount_;
};

// S10.6: binder_logs/ holds the kernel's files and proc/.
TEST_F(BinderLogsTest, S10_6_DirectoryListsTheLogFiles) {
  EXPECT_TRUE(list_dir(mount_.dir()).count("binder_logs"));
  EXPECT_EQ(list_dir(mount_.path("binder_logs")),
            (std::set<std::string>{"state", "stats", "transactions", "transaction_log",
                                   "failed_transaction_log", "proc"}));
  struct stat st;
  ASSERT_EQ(stat(mount_.path("binder_logs/stats").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0444u);
  EXPECT_EQ(open(mount_.path("binder_logs/stats").c_str(), O_WRONLY), -1);
  EXPECT_EQ(errno, EACCES);
}

// S10.6 `stats`: an open proc shows up with its threads and its device's variant; every device
// of the mount names its variant.
TEST_F(BinderLogsTest, S10_6_StatsShowTheOpenProcAndVariants) {
  BinderDevice device(mount_.path("binder"));
  ASSERT_EQ(device.map(), 0);
  ASSERT_GE(device.version(), 0);
  std::string text = logs("stats");
  EXPECT_EQ(text.rfind("binder stats:\n", 0), 0u) << text;
  for (const char* name : {"binder", "hwbinder", "vndbinder"})
    EXPECT_NE(text.find(std::string("device ") + name + "\n  variant: alloc_lock="),
              std::string::npos)
        << text;
  auto block = proc_block(text, getpid());
  ASSERT_GE(block.size(), 3u) << text;
  EXPECT_EQ(block[1], "context binder");
  EXPECT_TRUE(
      std::regex_match(block[2], std::regex("  variant: alloc_lock=[a-z-]+,pages=[a-z]+,"
                                            "lock_policy=[a-z-]+,defer_complete=o[nf]+,exec_"
                                            "context=[a-z]+,install_latency_us=[0-9]+")))
      << block[2];
  EXPECT_EQ(value_of(block, "  threads: "), 1);  // this thread's BINDER_VERSION
  EXPECT_EQ(value_of(block, "  nodes: "), 0);
  EXPECT_EQ(value_of(block, "  buffers: "), 0);
}

// S10.6 proc/<pid>: there while the pid has a device open, gone once it closed.
TEST_F(BinderLogsTest, S10_6_ProcFileFollowsTheOpenDevice) {
  const std::string file = mount_.path("binder_logs/proc/" + std::to_string(getpid()));
  {
    BinderDevice device(mount_.path("hwbinder"));
    ASSERT_GE(device.version(), 0);
    EXPECT_TRUE(list_dir(mount_.path("binder_logs/proc")).count(std::to_string(getpid())));
    std::string text = read_file(file);
    EXPECT_EQ(
        text.rfind("binder proc state:\nproc " + std::to_string(getpid()) + "\ncontext hwbinder\n",
                   0),
        0u)
        << text;
    EXPECT_NE(text.find("  thread "), std::string::npos) << text;
  }
  ASSERT_TRUE(mount_.wait_for_open_procs(0));
  struct stat st;
  EXPECT_EQ(stat(file.c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
}

// S10.6 transaction_log / failed_transaction_log: a failed call is in both, with its BR_ code.
TEST_F(BinderLogsTest, S10_6_FailedCallIsLogged) {
  BinderDevice device(mount_.path("vndbinder"));
  ASSERT_EQ(device.map(), 0);
  call_handle_zero(device);
  const std::string from = "from " + std::to_string(getpid()) + ":" + std::to_string(gettid());
  std::regex entry("\\d+: call  " + from +
                   " to 0:0 context vndbinder node 0 handle 0 size 0:0 ret " +
                   std::to_string(BR_DEAD_REPLY) + "/-?\\d+ l=\\d+");
  auto has_entry = [&](const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
      if (std::regex_match(line, entry)) return true;
    return false;
  };
  EXPECT_TRUE(has_entry(logs("failed_transaction_log"))) << logs("failed_transaction_log");
  EXPECT_TRUE(has_entry(logs("transaction_log"))) << logs("transaction_log");
  auto block = proc_block(logs("stats"), getpid());
  EXPECT_EQ(value_of(block, "  BC_TRANSACTION: "), 1);
  EXPECT_EQ(value_of(block, "  BR_DEAD_REPLY: "), 1);
  EXPECT_NE(logs("state").find("binder state:\n"), std::string::npos);
}

// S10.4: binder-control can be neither unlinked nor renamed, nor replaced by a rename.
TEST_F(BinderLogsTest, S10_4_ControlIsProtected) {
  EXPECT_EQ(unlink(mount_.path("binder-control").c_str()), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(rename(mount_.path("binder-control").c_str(), mount_.path("ctl").c_str()), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(rename(mount_.path("binder").c_str(), mount_.path("binder-control").c_str()), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_TRUE(list_dir(mount_.dir()).count("binder-control"));
  EXPECT_TRUE(list_dir(mount_.dir()).count("binder"));
  EXPECT_EQ(unlink(mount_.path("features/extended_error").c_str()), -1);
  EXPECT_EQ(errno, EPERM);
}

// S10.4: an unlinked device is gone from the mount but lives on for the procs that have it open.
TEST_F(BinderLogsTest, S10_4_UnlinkedDeviceKeepsWorkingForOpenProcs) {
  BinderDevice device(mount_.path("binder"));
  ASSERT_EQ(device.map(), 0);
  ASSERT_EQ(unlink(mount_.path("binder").c_str()), 0);
  struct stat st;
  EXPECT_EQ(stat(mount_.path("binder").c_str(), &st), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_FALSE(list_dir(mount_.dir()).count("binder"));
  EXPECT_EQ(device.version(), BINDER_CURRENT_PROTOCOL_VERSION);
  call_handle_zero(device);  // the ioctl path still reaches its proc
  auto block = proc_block(logs("stats"), getpid());
  EXPECT_EQ(block.size() > 1 ? block[1] : "", "context binder");
  EXPECT_EQ(logs("stats").find("device binder\n"), std::string::npos);  // no longer a device
  // The name is free again (S10.3).
  EXPECT_EQ(mount_.filesystem().add_device("binder", {}), 0);
  EXPECT_TRUE(list_dir(mount_.dir()).count("binder"));
}

// S10.4: rename moves a device to a new name, replaces an existing one, honours
// RENAME_NOREPLACE and RENAME_EXCHANGE.
TEST_F(BinderLogsTest, S10_4_RenameDevices) {
  ASSERT_EQ(rename(mount_.path("hwbinder").c_str(), mount_.path("hw2").c_str()), 0);
  auto names = list_dir(mount_.dir());
  EXPECT_TRUE(names.count("hw2"));
  EXPECT_FALSE(names.count("hwbinder"));
  {
    BinderDevice renamed(mount_.path("hw2"));
    ASSERT_GE(renamed.version(), 0);
    // The context keeps the name it was created with, as in the kernel.
    auto block = proc_block(logs("stats"), getpid());
    EXPECT_EQ(block.size() > 1 ? block[1] : "", "context hwbinder");
  }
  // Until its release has run, the closed proc is still listed and `swapped`'s block below would
  // start with it.
  ASSERT_TRUE(mount_.wait_for_open_procs(0));
  EXPECT_EQ(rename2(mount_.path("vndbinder"), mount_.path("hw2"), RENAME_NOREPLACE), -1);
  EXPECT_EQ(errno, EEXIST);
  ASSERT_EQ(rename2(mount_.path("vndbinder"), mount_.path("binder"), RENAME_EXCHANGE), 0);
  {
    BinderDevice swapped(mount_.path("binder"));
    ASSERT_GE(swapped.version(), 0);
    auto block = proc_block(logs("stats"), getpid());
    EXPECT_EQ(block.size() > 1 ? block[1] : "", "context vndbinder");
  }
  ASSERT_TRUE(mount_.wait_for_open_procs(0));
  // Replacing: the old target leaves the namespace.
  ASSERT_EQ(rename(mount_.path("hw2").c_str(), mount_.path("binder").c_str()), 0);
  names = list_dir(mount_.dir());
  EXPECT_FALSE(names.count("hw2"));
  EXPECT_TRUE(names.count("binder"));
  EXPECT_TRUE(names.count("vndbinder"));
  EXPECT_EQ(mount_.filesystem().device_names().size(), 2u);
  EXPECT_EQ(rename(mount_.path("nothing").c_str(), mount_.path("x").c_str()), -1);
  EXPECT_EQ(errno, ENOENT);
}

}  // namespace
}  // namespace cused

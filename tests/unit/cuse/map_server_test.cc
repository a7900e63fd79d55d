// SPDX-License-Identifier: GPL-2.0-only
// The daemon's mmap socket for CUSE nodes (cused/cuse/map_server.h) against the shim's client
// (client/preload/map_client.h), over a real Unix socket: who gets the memfd (S1.4: only the
// process that opened the node), and the rest of binder_mmap's rules the shim path keeps.
#include "cused/cuse/map_server.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/preload/map_client.h"
#include "cused/fuse/fuse.h"
#include "cused/cuse/shim_mapping.h"

namespace {

constexpr std::uint64_t kToken = 0x5eed5eed1234abcdull;
constexpr std::size_t kSize = 1 << 20;

class MapServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cuse-map-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    memfd_ = memfd_create("cuse-map-test", MFD_CLOEXEC);
    ASSERT_GE(memfd_, 0);
    ASSERT_EQ(ftruncate(memfd_, kSize), 0);
    // The test process opened the "node": it owns the proc.
    mapping_ = std::make_shared<cused::cuse::ShimMapping>(getpid(), memfd_);
    server_ = std::make_unique<cused::cuse::MapServer>(
        dir_ + "/binder.sock",
        [this](std::uint64_t token) { return token == kToken ? mapping_ : nullptr; });
  }
  void TearDown() override {
    server_.reset();
    close(memfd_);
    rmdir(dir_.c_str());
  }
  // One request on a fresh connection: the errno the shim's mmap would fail with, or 0 and the
  // memfd in *fd.
  int request(cused::preload::MapConnection& connection, unsigned prot, int* fd,
              std::uint64_t token = kToken) {
    if (int error = connection.connect(server_->path().c_str())) return error;
    return connection.request(token, prot, kSize, fd);
  }

  std::string dir_;
  int memfd_ = -1;
  std::shared_ptr<cused::cuse::ShimMapping> mapping_;
  std::unique_ptr<cused::cuse::MapServer> server_;
};

TEST_F(MapServerTest, OwnerGetsTheProcsMemfdAndTheDaemonRecordsTheMapping_S1_4_S1_7) {
  cused::preload::MapConnection connection;
  int fd = -1;
  ASSERT_EQ(request(connection, PROT_READ, &fd), 0);
  ASSERT_GE(fd, 0);
  void* mapped = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  // The same pages: what the daemon writes into the memfd, the client reads.
  ASSERT_EQ(pwrite(memfd_, "binder", 6, 4096), 6);
  EXPECT_EQ(std::memcmp(static_cast<char*>(mapped) + 4096, "binder", 6), 0);
  EXPECT_FALSE(mapping_->mapping()) << "not mapped until the shim reports its mmap";
  ASSERT_EQ(connection.report(0, reinterpret_cast<std::uintptr_t>(mapped), kSize), 0);
  auto recorded = mapping_->mapping();
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->start, reinterpret_cast<std::uintptr_t>(mapped));
  EXPECT_EQ(recorded->length, kSize);
  EXPECT_FALSE(recorded->writable);
  munmap(mapped, kSize);
  close(fd);
}

TEST_F(MapServerTest, MemfdComesReadOnlySoTheMappingCannotBecomeWritable_S1_4) {
  cused::preload::MapConnection connection;
  int fd = -1;
  ASSERT_EQ(request(connection, PROT_READ, &fd), 0);
  EXPECT_EQ(mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), MAP_FAILED);
  EXPECT_EQ(errno, EACCES);
  void* mapped = mmap(nullptr, kSize, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  EXPECT_EQ(mprotect(mapped, kSize, PROT_READ | PROT_WRITE), -1);
  EXPECT_EQ(errno, EACCES);  // binder_mmap clears VM_MAYWRITE: the kernel's answer too
  munmap(mapped, kSize);
  close(fd);
  connection.report(EIO, 0, 0);
}

TEST_F(MapServerTest, ProcessThatDoesNotOwnTheProcIsRefused_S1_4) {
  // A child knows the token (it inherited the descriptor, or was told) but did not open the node:
  // the daemon checks the peer's SO_PEERCRED pid and sends no memfd.
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cused::preload::MapConnection connection;
    int fd = -1;
    int error = request(connection, PROT_READ, &fd);
    _exit(error == EINVAL && fd < 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child got the memfd or another error than EINVAL";
  EXPECT_FALSE(mapping_->mapping());
  // The owner still can: a refused stranger does not use up the mapping.
  cused::preload::MapConnection connection;
  int fd = -1;
  EXPECT_EQ(request(connection, PROT_READ, &fd), 0);
  if (fd >= 0) close(fd);
}

TEST_F(MapServerTest, UnknownTokenIsRefusedWithEinval) {
  cused::preload::MapConnection connection;
  int fd = -1;
  EXPECT_EQ(request(connection, PROT_READ, &fd, kToken + 1), EINVAL);
  EXPECT_LT(fd, 0);
}

TEST_F(MapServerTest, WritableMappingIsRefusedWithEperm_S1_4) {
  cused::preload::MapConnection connection;
  int fd = -1;
  EXPECT_EQ(request(connection, PROT_READ | PROT_WRITE, &fd), EPERM);
  EXPECT_LT(fd, 0);
}

TEST_F(MapServerTest, FailedMmapDoesNotUseUpTheOnlyMappingButASecondOneIsBusy_S1_4) {
  {
    cused::preload::MapConnection connection;
    int fd = -1;
    ASSERT_EQ(request(connection, PROT_READ, &fd), 0);
    close(fd);
    connection.report(ENOMEM, 0, 0);  // the shim's own mmap failed
  }
  EXPECT_FALSE(mapping_->mapping());
  {
    cused::preload::MapConnection connection;
    int fd = -1;
    ASSERT_EQ(request(connection, PROT_READ, &fd), 0);
    close(fd);
    ASSERT_EQ(connection.report(0, 0x7f0000000000, kSize), 0);
  }
  cused::preload::MapConnection connection;
  int fd = -1;
  EXPECT_EQ(request(connection, PROT_READ, &fd), EBUSY);
}

TEST_F(MapServerTest, PeerThatHangsUpMidwayLeavesTheProcUnmapped) {
  {
    cused::preload::MapConnection connection;
    int fd = -1;
    ASSERT_EQ(request(connection, PROT_READ, &fd), 0);
    close(fd);
  }  // closed without a report
  cused::preload::MapConnection connection;
  int fd = -1;
  // The server finishes the abandoned connection first, so this request sees it aborted.
  EXPECT_EQ(request(connection, PROT_READ, &fd), 0);
  if (fd >= 0) close(fd);
}

}  // namespace

namespace {

std::vector<std::string>* g_log = nullptr;

void capture_log(fuse_log_level, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  if (g_log) g_log->push_back(line);
}

TEST_F(MapServerTest, ProcNeededUnmappedLogsHowToMapACuseNodeOnce_S1_7) {
  // A client that mapped without the shim got ENODEV from the kernel; the daemon only notices
  // when core needs the proc's mapping, and then says what to do, once.
  std::vector<std::string> log;
  g_log = &log;
  fuse_set_log_func(capture_log);
  cused::cuse::ShimMappingFinder finder(mapping_, "binder-cuse");
  EXPECT_FALSE(finder.find());
  EXPECT_FALSE(finder.find());
  fuse_set_log_func(nullptr);
  g_log = nullptr;
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("/dev/binder-cuse"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("ENODEV"), std::string::npos) << log[0];
  EXPECT_NE(log[0].find("LD_PRELOAD=libcused-preload.so"), std::string::npos) << log[0];
}

}  // namespace

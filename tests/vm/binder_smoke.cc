// SPDX-License-Identifier: GPL-2.0-only
// binder_smoke DEVICE: a few raw-ioctl checks of the first things a binder client does (open,
// version, mmap, max threads, a first read), against any binder device node. It exists to prove
// tests/vm/run end to end on the kernel's driver; the conformance suite goes much further.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "client/cused_differences.h"
#include "uapi/binder.h"

namespace {

std::string g_device;  // set from the command line by main()

constexpr std::size_t kMapSize = 1u << 20;

// An open binder fd that closes itself.
class BinderFd {
 public:
  explicit BinderFd(int flags) : fd_(::open(g_device.c_str(), O_RDWR | O_CLOEXEC | flags)) {}
  ~BinderFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  BinderFd(const BinderFd&) = delete;
  BinderFd& operator=(const BinderFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// A mapping that unmaps itself; holds MAP_FAILED when mmap failed.
class Mapping {
 public:
  Mapping(int fd, int prot) : addr_(::mmap(nullptr, kMapSize, prot, MAP_PRIVATE, fd, 0)) {}
  ~Mapping() {
    if (ok()) ::munmap(addr_, kMapSize);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  bool ok() const { return addr_ != MAP_FAILED; }
  void* addr() const { return addr_; }

 private:
  void* addr_;
};

// A BINDER_WRITE_READ that only reads: 0 or its errno; bwr is what the driver copied back.
int ReadOnly(int fd, binder_write_read& bwr, std::uint32_t (&buffer)[8]) {
  bwr = {};
  bwr.read_size = sizeof(buffer);
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(buffer);
  return ::ioctl(fd, BINDER_WRITE_READ, &bwr) == 0 ? 0 : errno;
}

class BinderSmoke : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_GE(fd_.get(), 0) << g_device << ": " << std::strerror(errno); }
  BinderFd fd_{0};
};

TEST_F(BinderSmoke, VersionIsProtocol8_S2_7) {
  binder_version version{};
  ASSERT_EQ(::ioctl(fd_.get(), BINDER_VERSION, &version), 0) << std::strerror(errno);
  EXPECT_EQ(version.protocol_version, cused::uapi::kProtocolVersion);
}

TEST_F(BinderSmoke, WritableMmapFailsWithEperm_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  Mapping writable(fd_.get(), PROT_READ | PROT_WRITE);
  EXPECT_FALSE(writable.ok());
  EXPECT_EQ(errno, EPERM);
}

TEST_F(BinderSmoke, FailedMmapDoesNotUseUpTheOnlyMmap_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  Mapping writable(fd_.get(), PROT_READ | PROT_WRITE);
  ASSERT_FALSE(writable.ok());
  Mapping readable(fd_.get(), PROT_READ);
  EXPECT_TRUE(readable.ok()) << std::strerror(errno);
}

TEST_F(BinderSmoke, SecondMmapFailsWithEbusy_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  Mapping first(fd_.get(), PROT_READ);
  ASSERT_TRUE(first.ok()) << std::strerror(errno);
  Mapping second(fd_.get(), PROT_READ);
  EXPECT_FALSE(second.ok());
  EXPECT_EQ(errno, EBUSY);
}

TEST_F(BinderSmoke, MappingCannotBeMadeWritable_S1_4) {
  CUSED_SKIP_WHERE_CUSED_DIFFERS(g_device, "S1.4");
  Mapping mapping(fd_.get(), PROT_READ);
  ASSERT_TRUE(mapping.ok()) << std::strerror(errno);
  EXPECT_EQ(::mprotect(mapping.addr(), kMapSize, PROT_READ | PROT_WRITE), -1);
  EXPECT_EQ(errno, EACCES);
}

TEST_F(BinderSmoke, SetMaxThreadsSucceeds_S2_2) {
  std::uint32_t max_threads = 15;
  EXPECT_EQ(::ioctl(fd_.get(), BINDER_SET_MAX_THREADS, &max_threads), 0) << std::strerror(errno);
}

TEST_F(BinderSmoke, EmptyWriteReadSucceeds_S2_1) {
  binder_write_read bwr{};
  EXPECT_EQ(::ioctl(fd_.get(), BINDER_WRITE_READ, &bwr), 0) << std::strerror(errno);
  EXPECT_EQ(bwr.write_consumed, 0u);
  EXPECT_EQ(bwr.read_consumed, 0u);
}

// A new thread's first read returns at once with BR_NOOP (looper_need_return is set until its
// first ioctl ends); after that a non-blocking read with no work fails with EAGAIN, and bwr comes
// back with read_consumed unchanged.
TEST(BinderSmokeNonBlocking, ReadWithoutWorkFailsWithEagain_S1_11) {
  BinderFd fd(O_NONBLOCK);
  ASSERT_GE(fd.get(), 0) << std::strerror(errno);
  Mapping mapping(fd.get(), PROT_READ);
  ASSERT_TRUE(mapping.ok()) << std::strerror(errno);
  binder_write_read bwr{};
  std::uint32_t buffer[8] = {};

  ASSERT_EQ(ReadOnly(fd.get(), bwr, buffer), 0);
  ASSERT_EQ(bwr.read_consumed, sizeof(std::uint32_t));
  EXPECT_EQ(buffer[0], static_cast<std::uint32_t>(BR_NOOP));

  EXPECT_EQ(ReadOnly(fd.get(), bwr, buffer), EAGAIN);
  EXPECT_EQ(bwr.read_consumed, 0u);
  EXPECT_EQ(bwr.read_size, sizeof(buffer));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s [gtest flags] DEVICE (e.g. /dev/binder)\n", argv[0]);
    return 2;
  }
  g_device = argv[1];
  return RUN_ALL_TESTS();
}

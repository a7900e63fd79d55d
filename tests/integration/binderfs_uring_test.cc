// FUSE over io_uring (DESIGN.md section 2): a parked binder read holds one ring entry, and
// replies come from whichever daemon thread delivers work. This checks that many parked reads do
// not starve the ring and that completing them from another thread is safe. Signals are not
// tested here because this mode cannot honour them: libfuse 3.18 delivers no FUSE_INTERRUPT for
// io_uring requests (docs/binderfs.md), which is why --io-uring is off by default.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <fstream>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "tests/integration/mounted_binderfs.h"

namespace cused {
namespace {

using client::BinderDevice;

// Turns the fuse module's enable_uring on when we may (CI runs as root); false if impossible.
bool enable_fuse_uring() {
  const char* parameter = "/sys/module/fuse/parameters/enable_uring";
  { std::ofstream(parameter) << "Y"; }
  std::ifstream in(parameter);
  char value = 'N';
  in >> value;
  return value == 'Y';
}

binderfs::MountOptions uring_mount() {
  binderfs::MountOptions options;
  options.io_uring = true;
  return options;
}

class BinderfsUringTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!enable_fuse_uring()) GTEST_SKIP() << "this kernel's fuse has no enable_uring";
    mount_ =
        std::make_unique<testing::MountedBinderfs>(binderfs::FilesystemOptions{}, uring_mount());
  }
  std::unique_ptr<testing::MountedBinderfs> mount_;
};

int read_once(const BinderDevice& device) {
  std::uint32_t words[16];
  binder_write_read bwr{};
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  return device.write_read(bwr);
}

// 96 parked reads (six libbinder pools; libfuse's own default depth is 8) leave the ring able to
// serve other requests, and a flush from another thread completes every one of them (S1.8).
TEST_F(BinderfsUringTest, ManyParkedReadsDoNotStarveTheRing) {
  BinderDevice device(mount_->path("binder"));
  // The ring is registered after INIT; the first requests may still come over /dev/fuse.
  for (int i = 0; i < 100 && mount_->filesystem().uring_ioctls() == 0; ++i) {
    ASSERT_EQ(device.version(), 8);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(mount_->filesystem().uring_ioctls(), 0u) << "requests did not come over io_uring";

  constexpr int kReaders = 96;
  std::atomic<int> parked{0}, woken{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < kReaders; ++i) {
    readers.emplace_back([&] {
      read_once(device);  // need_return: comes back at once
      ++parked;
      if (read_once(device) == 0) ++woken;
    });
  }
  while (parked < kReaders) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Other requests still get through while every reader is parked.
  for (int i = 0; i < 50; ++i) ASSERT_EQ(device.version(), 8);
  BinderDevice other(mount_->path("hwbinder"));
  EXPECT_EQ(other.version(), 8);

  close(dup(device.fd()));  // flush: completes every parked read from this request's thread
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(woken.load(), kReaders);
}

}  // namespace
}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
// The shim recognises a cused CUSE descriptor by its sysfs node (client/preload/cuse_fd.h). These
// tests give it a stand-in sysfs whose dev/char links say what /dev/null (char 1:3) is.
#include "client/preload/cuse_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

class CuseFdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cuse-fd-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    fs::create_directories(root_ / "dev/char");
    null_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(null_fd_, 0);
    struct stat st {};
    ASSERT_EQ(fstat(null_fd_, &st), 0);
    ASSERT_TRUE(S_ISCHR(st.st_mode));
    null_link_ = root_ / "dev/char" /
                 (std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)));
  }
  void TearDown() override {
    close(null_fd_);
    fs::remove_all(root_);
  }
  void link_null_to(const std::string& target) { fs::create_symlink(target, null_link_); }
  bool recognise(int fd, char* name, std::size_t size) {
    return cused::preload::cuse_device_name(fd, root_.c_str(), name, size);
  }

  fs::path root_;
  fs::path null_link_;
  int null_fd_ = -1;
};

TEST_F(CuseFdTest, CharDeviceOfTheCuseClassIsRecognisedWithItsName) {
  link_null_to("../../devices/virtual/cuse/binder-cuse");
  char name[64] = {};
  ASSERT_TRUE(recognise(null_fd_, name, sizeof name));
  EXPECT_STREQ(name, "binder-cuse");
}

TEST_F(CuseFdTest, CharDeviceOfAnotherClassIsNotCuse) {
  link_null_to("../../devices/virtual/mem/null");
  char name[64] = {};
  EXPECT_FALSE(recognise(null_fd_, name, sizeof name));
}

TEST_F(CuseFdTest, ClassNameMustMatchWholly) {
  link_null_to("../../devices/virtual/notcuse/binder");
  char name[64] = {};
  EXPECT_FALSE(recognise(null_fd_, name, sizeof name));
}

TEST_F(CuseFdTest, CharDeviceWithoutSysfsNodeIsNotCuse) {
  char name[64] = {};
  EXPECT_FALSE(recognise(null_fd_, name, sizeof name));
}

TEST_F(CuseFdTest, RegularFileAndPipeAreNotCuse) {
  link_null_to("../../devices/virtual/cuse/binder");
  char name[64] = {};
  int file = open((root_ / "file").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
  ASSERT_GE(file, 0);
  EXPECT_FALSE(recognise(file, name, sizeof name));
  close(file);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_FALSE(recognise(pipe_fds[0], name, sizeof name));
  close(pipe_fds[0]);
  close(pipe_fds[1]);
}

TEST_F(CuseFdTest, ClosedDescriptorIsNotCuse) {
  char name[64] = {};
  EXPECT_FALSE(recognise(-1, name, sizeof name));
  EXPECT_FALSE(recognise(12345, name, sizeof name));
}

TEST_F(CuseFdTest, NameThatDoesNotFitIsRefusedRatherThanCut) {
  link_null_to("../../devices/virtual/cuse/binder");
  char name[6] = {};  // "binder" needs 7 bytes with its terminator
  EXPECT_FALSE(recognise(null_fd_, name, sizeof name));
  char fits[7] = {};
  EXPECT_TRUE(recognise(null_fd_, fits, sizeof fits));
  EXPECT_STREQ(fits, "binder");
}

}  // namespace

// SPDX-License-Identifier: GPL-2.0-only
// with-dev-binder DEVICE COMMAND [ARGS...]: runs COMMAND in a private mount namespace in which
// /dev/binder is DEVICE (a cused node, or any binder node), for programs that open /dev/binder
// and take no device option: Google's binderThroughputTest, binderLibTest, schd-dbg (libbinder's
// ProcessState opens "/dev/binder"), binderDriverInterfaceTest. Nothing changes outside the
// namespace, so runs against different devices can go on side by side and the host's /dev is
// left alone.
//
// The namespace's /dev is a tmpfs of symlinks: each entry of the host's /dev points into a
// recursive bind of it (/dev/.host, so /dev/pts and /dev/shm work as before), and /dev/binder
// points to DEVICE. Character and block devices (/dev/null, /dev/urandom) are bind mounts of the
// host's nodes instead: a program may open them with O_NOFOLLOW, which a symlink fails with ELOOP
// (Android 14's libbinder reads /dev/urandom so for an RPC session id). When DEVICE is /dev/binder
// itself COMMAND runs as it is. Needs CAP_SYS_ADMIN (as cused does). Exit status: COMMAND's (it is
// exec'd), 126 if it cannot be run, 125 if the namespace cannot be set up.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "client/program_errors.h"
#include "core/version.h"

namespace {

constexpr const char* kHostDev = "/dev/.host";
constexpr int kSetupFailed = 125;
constexpr int kCannotRun = 126;

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void check(int result, const std::string& what) {
  if (result < 0) fail(what);
}

// A private copy of the mount tree, so that the mounts below are seen by COMMAND alone.
void enter_private_mount_namespace() {
  check(unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)");
  check(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), "making / private");
}

// NODE (the host's device node, under .host) bound onto an empty file at PATH: the same inode, so
// the same device, with no symlink on the way.
bool bind_device(const std::string& node, const std::string& path) {
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return mount(node.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) == 0;
}

// In STAGE (a fresh tmpfs): .host = the host's /dev, a symlink per entry into it (a bind for a
// device node), binder = DEVICE.
void populate_dev(const std::string& stage, const std::string& device) {
  std::string host = stage + "/.host";
  check(mkdir(host.c_str(), 0755), "mkdir " + host);
  check(mount("/dev", host.c_str(), nullptr, MS_BIND | MS_REC, nullptr), "binding /dev");
  DIR* dir = opendir("/dev");
  if (dir == nullptr) fail("opendir /dev");
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || name == "binder") continue;
    std::string target = std::string(kHostDev) + "/" + name;
    std::string entry_path = stage + "/" + name;
    std::string host_entry = host + "/" + name;  // target, before the move to /dev
    struct stat entry_status {};
    bool is_device = lstat(host_entry.c_str(), &entry_status) == 0 &&
                     (S_ISCHR(entry_status.st_mode) || S_ISBLK(entry_status.st_mode));
    if (!(is_device ? bind_device(host_entry, entry_path)
                    : symlink(target.c_str(), entry_path.c_str()) == 0)) {
      int error = errno;
      closedir(dir);
      errno = error;
      fail((is_device ? "binding " : "symlink ") + name);
    }
  }
  closedir(dir);
  check(symlink(device.c_str(), (stage + "/binder").c_str()), "symlink binder");
}

void make_dev_binder(const std::string& device) {
  enter_private_mount_namespace();
  char stage_template[] = "/tmp/cused-dev-XXXXXX";
  if (mkdtemp(stage_template) == nullptr) fail("mkdtemp");
  std::string stage = stage_template;
  check(mount("cused-dev", stage.c_str(), "tmpfs", MS_NOSUID, "mode=0755"), "tmpfs");
  populate_dev(stage, device);
  check(mount(stage.c_str(), "/dev", nullptr, MS_MOVE, nullptr), "moving the tmpfs to /dev");
  // Only a mount point in this namespace; the directory itself is the host's /tmp's.
  rmdir(stage.c_str());
}

constexpr const char* kUsage = "Usage: with-dev-binder DEVICE COMMAND [ARGS...]\n";

void print_help() {
  std::printf(
      "with-dev-binder: runs COMMAND with /dev/binder being DEVICE\n%s\n"
      "COMMAND runs in a private mount namespace whose /dev has every entry of the host's /dev\n"
      "and a /dev/binder that points to DEVICE (a cused node, or any binder node), for programs\n"
      "that open /dev/binder and take no device option (Google's binderThroughputTest,\n"
      "binderLibTest). Nothing changes outside the namespace. Needs CAP_SYS_ADMIN.\n\n"
      "Options:\n"
      "  --help     Print this help message and exit\n"
      "  --version  Display program version information and exit\n\n"
      "Exit status: COMMAND's (it is exec'd); 125 if the namespace cannot be set up, 126 if\n"
      "COMMAND cannot be run, 2 on bad usage.\n",
      kUsage);
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
    print_help();
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("%s\n", cused::version_text("with-dev-binder", nullptr).c_str());
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "%s", kUsage);
    return 2;
  }
  std::error_code error;
  auto device = std::filesystem::absolute(argv[1], error).lexically_normal().string();
  try {
    if (device != "/dev/binder") make_dev_binder(device);
  } catch (const std::system_error& failure) {
    std::fprintf(stderr, "with-dev-binder: %s\n", failure.what());
    return kSetupFailed;
  }
  execvp(argv[2], argv + 2);
  std::fprintf(stderr, "with-dev-binder: %s: %s\n", argv[2], std::strerror(errno));
  return kCannotRun;
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}

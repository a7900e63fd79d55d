// SPDX-License-Identifier: GPL-2.0-only
#include "cused/cuse/session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "cused/cuse/device.h"

namespace cused::cuse {

namespace {

int open_channel(const std::string& name) {
  int fd = open("/dev/cuse", O_RDWR | O_CLOEXEC);
  if (fd >= 0) return fd;
  int err = errno;
  if (err == ENOENT || err == ENODEV || err == ENXIO)
    throw std::runtime_error(fmt::format(
        "cused: --cuse {}: this kernel has no CUSE (/dev/cuse: {}; it needs CONFIG_CUSE, try "
        "`modprobe cuse`). The binderfs frontend needs no CUSE: cused --mount DIR",
        name, std::strerror(err)));
  throw std::runtime_error(fmt::format("cused: --cuse {}: cannot open /dev/cuse: {}{}", name,
                                       std::strerror(err),
                                       err == EACCES || err == EPERM ? " (needs root)" : ""));
}

// "MAJOR:MINOR" of a CUSE device from sysfs, for a /dev without devtmpfs.
dev_t sysfs_device_number(const std::string& name) {
  std::ifstream file("/sys/class/cuse/" + name + "/dev");
  unsigned major = 0, minor = 0;
  char colon = 0;
  if (!(file >> major >> colon >> minor) || colon != ':') return 0;
  return makedev(major, minor);
}

}  // namespace

Session::Session(Device& device, const SessionOptions& options)
    : node_path_("/dev/" + device.name()) {
  int channel = open_channel(device.name());
  std::string devname = "DEVNAME=" + device.name();
  const char* info[] = {devname.c_str()};
  cuse_info ci{};
  ci.dev_info_argc = 1;
  ci.dev_info_argv = info;
  ci.flags = CUSE_UNRESTRICTED_IOCTL;
  std::vector<std::string> words{"cused"};
  if (options.debug) words.push_back("-d");
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  session_ = cuse_lowlevel_new(&args, &ci, &Device::operations(), &device);
  fuse_opt_free_args(&args);
  // libfuse's way to hand a session an already open channel: "/dev/fd/N".
  if (!session_ || fuse_session_mount(session_, fmt::format("/dev/fd/{}", channel).c_str()) != 0) {
    if (session_) fuse_session_destroy(session_);
    close(channel);
    throw std::runtime_error("cused: could not create the CUSE session for " + device.name());
  }
  try {
    serve_init();
    prepare_node(options);
  } catch (...) {
    fuse_session_destroy(session_);  // closes the channel: the device goes away
    throw;
  }
  workers_.start(std::max(options.threads, 1u),
                 [this](const std::atomic<bool>& stopping) { work(stopping); });
}

Session::~Session() {
  stop();
  // Not fuse_session_unmount: for a "/dev/fd/N" session it would try to unmount that path.
  fuse_session_destroy(session_);
}

void Session::serve_init() {
  // The kernel creates the character device while it processes the reply to CUSE_INIT, so once
  // that request is answered the device exists, or the kernel has aborted the channel (a name
  // already taken, no device number left).
  fuse_buf buffer{};
  int got = fuse_session_receive_buf(session_, &buffer);
  if (got > 0) fuse_session_process_buf(session_, &buffer);
  std::free(buffer.mem);
  pollfd channel{fuse_session_fd(session_), 0, 0};
  bool aborted = poll(&channel, 1, 0) == 1 && (channel.revents & POLLERR);
  if (got <= 0 || aborted)
    throw std::runtime_error(fmt::format(
        "cused: the kernel refused to create CUSE device {} (is the name taken? see dmesg)",
        node_path_));
}

void Session::prepare_node(const SessionOptions& options) {
  struct stat st {};
  std::string name = node_path_.substr(5);
  // devtmpfs makes the node as part of creating the device; a /dev without it gets it from us.
  if (stat(node_path_.c_str(), &st) != 0) {
    dev_t number = sysfs_device_number(name);
    if (number == 0 || mknod(node_path_.c_str(), S_IFCHR | 0600, number) != 0)
      throw std::runtime_error(
          fmt::format("cused: CUSE device {} has no node in /dev: {}", name, std::strerror(errno)));
  }
  if (chown(node_path_.c_str(), options.uid, options.gid) != 0 ||
      chmod(node_path_.c_str(), options.mode & 07777) != 0)
    throw std::runtime_error(fmt::format("cused: cannot set the owner and mode of {}: {}",
                                         node_path_, std::strerror(errno)));
}

void Session::work(const std::atomic<bool>& stopping) {
  fuse_buf buffer{};
  while (!fuse_session_exited(session_) && !stopping.load(std::memory_order_acquire)) {
    int got = fuse_session_receive_buf(session_, &buffer);
    if (got == -EINTR || got == -EAGAIN) continue;
    if (got <= 0) break;  // stopped, or the channel is gone (ENODEV)
    fuse_session_process_buf(session_, &buffer);
  }
  std::free(buffer.mem);
}

void Session::stop() {
  fuse_session_exit(session_);
  workers_.stop();
}

}  // namespace cused::cuse

// SPDX-License-Identifier: GPL-2.0-only
// libcused-client's device handle: one open binder device (any path: cused's binderfs node or
// the kernel's /dev/binder), its read-only buffer mapping, and the raw ioctls. Errors come back
// as -errno, the way a binder test wants to compare them with the kernel's.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "uapi/binder.h"

namespace cused::client {

class BinderDevice {
 public:
  // libbinder's mapping: 1 MiB minus two pages.
  static constexpr std::size_t kDefaultMapSize = (1u << 20) - 2 * 4096;

  // Throws DeviceOpenError (a std::system_error) when open() fails.
  explicit BinderDevice(const std::string& path, int flags = O_RDWR | O_CLOEXEC);
  ~BinderDevice();
  BinderDevice(BinderDevice&& other) noexcept;
  BinderDevice& operator=(BinderDevice&&) = delete;
  BinderDevice(const BinderDevice&) = delete;
  BinderDevice& operator=(const BinderDevice&) = delete;

  int fd() const { return fd_; }
  // mmap(PROT_READ, MAP_PRIVATE) as libbinder does. 0 or -errno.
  int map(std::size_t size = kDefaultMapSize, int prot = PROT_READ);
  const std::byte* mapping() const { return mapping_; }
  std::size_t mapping_size() const { return mapping_size_; }

  // Any ioctl on the fd: 0 (or the ioctl's non-negative result) or -errno.
  int ioctl(unsigned long request, void* arg) const;
  // BINDER_VERSION: the protocol version or -errno.
  int version() const;
  int write_read(binder_write_read& bwr) const { return ioctl(BINDER_WRITE_READ, &bwr); }
  int set_max_threads(std::uint32_t count) const;

 private:
  int fd_ = -1;
  std::byte* mapping_ = nullptr;
  std::size_t mapping_size_ = 0;
};

}  // namespace cused::client

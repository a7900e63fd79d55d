// SPDX-License-Identifier: GPL-2.0-only
#include "client/binder_device.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "client/program_errors.h"

namespace cused::client {

static_assert(BinderDevice::kDefaultMapSize == (1u << 20) - 8192);

BinderDevice::BinderDevice(const std::string& path, int flags) : fd_(::open(path.c_str(), flags)) {
  if (fd_ < 0) throw DeviceOpenError(path, errno);
}

BinderDevice::BinderDevice(BinderDevice&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)) {}

BinderDevice::~BinderDevice() {
  if (mapping_) munmap(mapping_, mapping_size_);
  if (fd_ >= 0) close(fd_);
}

int BinderDevice::map(std::size_t size, int prot) {
  void* address = mmap(nullptr, size, prot, MAP_PRIVATE | MAP_NORESERVE, fd_, 0);
  if (address == MAP_FAILED) return -errno;
  if (mapping_) munmap(mapping_, mapping_size_);
  mapping_ = static_cast<std::byte*>(address);
  mapping_size_ = size;
  return 0;
}

int BinderDevice::ioctl(unsigned long request, void* arg) const {
  int result = ::ioctl(fd_, request, arg);
  return result < 0 ? -errno : result;
}

int BinderDevice::version() const {
  binder_version version{};
  int result = ioctl(BINDER_VERSION, &version);
  return result < 0 ? result : version.protocol_version;
}

int BinderDevice::set_max_threads(std::uint32_t count) const {
  return ioctl(BINDER_SET_MAX_THREADS, &count);
}

}  // namespace cused::client

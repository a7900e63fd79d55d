// SPDX-License-Identifier: GPL-2.0-only
#include "tools/programs/binderctl_control.h"

#include <fcntl.h>
#include <linux/android/binderfs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace cused::binderctl {

namespace {

template <std::size_t N>
bool copy_text(char (&field)[N], const std::string& text) {
  if (text.size() >= N) return false;
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), text.size());
  return true;
}

}  // namespace

ControlFile::ControlFile(const std::string& mount) : path_(mount + "/binder-control") {
  open_path();
}

ControlFile::ControlFile(const CuseNode& node) : path_(node.path) { open_path(); }

void ControlFile::open_path() {
  fd_ = open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) open_failure_ = {errno, "open " + path_};
}

ControlFile::~ControlFile() {
  if (fd_ >= 0) close(fd_);
}

std::optional<Failure> ControlFile::create(const std::string& name_and_spec) const {
  binderfs_device device{};
  if (!copy_text(device.name, name_and_spec))
    return Failure{ENAMETOOLONG, "BINDER_CTL_ADD " + name_and_spec};
  if (ioctl(fd_, BINDER_CTL_ADD, &device) != 0)
    return Failure{errno, "BINDER_CTL_ADD " + name_and_spec};
  return std::nullopt;
}

Result<uapi::cused_device_variant> ControlFile::variant_ioctl(unsigned cmd,
                                                              const std::string& device,
                                                              const std::string& spec) const {
  uapi::cused_device_variant argument{};
  std::string what =
      (cmd == uapi::CUSED_CTL_SET_VARIANT ? "set variant of " : "get variant of ") + device;
  if (!copy_text(argument.name, device) || !copy_text(argument.spec, spec))
    return Failure{ENAMETOOLONG, what};
  if (ioctl(fd_, cmd, &argument) != 0) return Failure{errno, what};
  argument.spec[sizeof argument.spec - 1] = '\0';
  return argument;
}

Result<std::string> ControlFile::variant(const std::string& device) const {
  auto result = variant_ioctl(uapi::CUSED_CTL_GET_VARIANT, device, "");
  if (auto* failure = std::get_if<Failure>(&result)) return *failure;
  return std::string(std::get<uapi::cused_device_variant>(result).spec);
}

Result<std::string> ControlFile::set_variant(const std::string& device,
                                             const std::string& spec) const {
  auto result = variant_ioctl(uapi::CUSED_CTL_SET_VARIANT, device, spec);
  if (auto* failure = std::get_if<Failure>(&result)) return *failure;
  return std::string(std::get<uapi::cused_device_variant>(result).spec);
}

Result<uapi::cused_shrink_result> ControlFile::shrink() const {
  uapi::cused_shrink_result result{};
  if (ioctl(fd_, uapi::CUSED_CTL_SHRINK, &result) != 0) return Failure{errno, "shrink"};
  return result;
}

Result<uapi::cused_trace> ControlFile::trace(const std::string& path) const {
  uapi::cused_trace argument{};
  argument.start = !path.empty();
  std::string what = path.empty() ? "trace stop" : "trace start " + path;
  if (!copy_text(argument.path, path)) return Failure{ENAMETOOLONG, what};
  if (ioctl(fd_, uapi::CUSED_CTL_TRACE, &argument) != 0) return Failure{errno, what};
  return argument;
}

}  // namespace cused::binderctl

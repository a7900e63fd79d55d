// SPDX-License-Identifier: GPL-2.0-only
// binderctl's and binder-ab's way into a running cused: the ioctls of its mount's binder-control
// (BINDER_CTL_ADD and uapi/cused.h), or uapi/cused.h's on one of its CUSE nodes, which answers
// them as binder-control does (docs/cuse.md).
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "uapi/cused.h"

namespace cused::binderctl {

// An errno from an ioctl or open, with what was being done.
struct Failure {
  int err = 0;
  std::string what;
};

template <typename T>
using Result = std::variant<T, Failure>;

class ControlFile {
 public:
  // Opens `mount`/binder-control; failure() says why not.
  explicit ControlFile(const std::string& mount);
  struct CuseNode {
    std::string path;  // /dev/NAME
  };
  // Opens a CUSE node of the daemon (an open of a binder device: the daemon makes a proc for it
  // until this closes); failure() says why not. It has no BINDER_CTL_ADD (create()).
  explicit ControlFile(const CuseNode& node);
  ~ControlFile();
  ControlFile(const ControlFile&) = delete;
  ControlFile& operator=(const ControlFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  const Failure& failure() const { return open_failure_; }

  // BINDER_CTL_ADD with "NAME" or "NAME:SPEC"; nothing, or why not.
  std::optional<Failure> create(const std::string& name_and_spec) const;
  // The device's variant in full text form.
  Result<std::string> variant(const std::string& device) const;
  // Applies `spec` to the device's variant for procs opened from now on; the result in full.
  Result<std::string> set_variant(const std::string& device, const std::string& spec) const;
  Result<uapi::cused_shrink_result> shrink() const;
  // Starts the daemon's trace into `path` (absolute), or stops it (`path` empty): what the
  // stopped trace held.
  Result<uapi::cused_trace> trace(const std::string& path) const;

 private:
  void open_path();
  Result<uapi::cused_device_variant> variant_ioctl(unsigned cmd, const std::string& device,
                                                   const std::string& spec) const;

  std::string path_;
  int fd_ = -1;
  Failure open_failure_;
};

}  // namespace cused::binderctl

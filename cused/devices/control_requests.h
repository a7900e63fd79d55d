// SPDX-License-Identifier: GPL-2.0-only
// cused's own control ioctls (uapi/cused.h: read and change a device's variant, shrink now,
// trace) served from the device registry, whichever node they came in on: binder-control of a
// binderfs mount, or a CUSE device node. The frontend brings the argument in (FUSE has copied it;
// for CUSE the daemon reads the caller's memory) and sends `out` back.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "cused/devices/device_registry.h"

namespace cused::devices {

struct ControlRequest {
  unsigned cmd = 0;
  std::span<const std::byte> argument;  // what the caller passed in, _IOC_SIZE(cmd) bytes
  uid_t caller_uid = 0;
  std::string node;  // the node it came in on, for the daemon's log ("binder-control")
};

struct ControlAnswer {
  int error = 0;               // 0, or the errno the ioctl fails with
  std::vector<std::byte> out;  // on success, what goes back to the caller's argument
};

// Whether `cmd` is one of uapi/cused.h's CUSED_CTL_* commands.
bool is_control_ioctl(unsigned cmd);
// Whether a caller with (fs)uid `uid` may use them where the node itself does not restrict who
// opens it: root, or the daemon's own user (binder-control is root's, 0600, as in binderfs).
bool may_control(uid_t uid);
// Serves one CUSED_CTL_* command with the answers uapi/cused.h gives: EFAULT for a short
// argument, ENOENT for an unknown device, EINVAL for a bad spec (the daemon's log says why),
// ENOTTY for a daemon with no shrinker or trace, EPERM for a trace asked by another user.
ControlAnswer serve_control(DeviceRegistry& registry, const ControlRequest& request);

}  // namespace cused::devices

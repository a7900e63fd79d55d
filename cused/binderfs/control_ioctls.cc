// SPDX-License-Identifier: GPL-2.0-only
// The ioctls of `binder-control`: the kernel's BINDER_CTL_ADD (S10.3), which in cused also takes
// "NAME:SPEC" to create a device with a variant, and cused's own (uapi/cused.h), which the device
// registry serves: read and change a device's variant, shrink now, trace (docs/design.md
// sections 5 and 6).

#include <cerrno>
#include <cstring>
#include <span>
#include <string>

#include "core/device_variant.h"
#include "cused/binderfs/filesystem.h"
#include "cused/devices/control_requests.h"
#include "cused/fuse/request.h"
#include "uapi/binder.h"

namespace cused::binderfs {

namespace {

constexpr const char* kControlNode = "binder-control";

void reply_error(fuse_req_t req, int err) { fuse::reply_err(req, err); }

}  // namespace

void Filesystem::control_ioctl(fuse_req_t req, unsigned cmd, const void* in, std::size_t in_size) {
  if (cmd == BINDER_CTL_ADD) return add_device_ioctl(req, in, in_size);
  // S10.3: binderfs answers EINVAL to any other command; cused serves its own too.
  if (!devices::is_control_ioctl(cmd)) return reply_error(req, EINVAL);
  devices::ControlAnswer answer =
      devices::serve_control(registry_, {cmd, std::span(static_cast<const std::byte*>(in), in_size),
                                         fuse_req_ctx(req)->uid, kControlNode});
  if (answer.error != 0) return reply_error(req, answer.error);
  fuse::reply_ioctl(req, 0, answer.out.data(), answer.out.size());
}

void Filesystem::add_device_ioctl(fuse_req_t req, const void* in, std::size_t in_size) {
  binderfs_device device{};
  if (in_size < sizeof device) return reply_error(req, EFAULT);
  std::memcpy(&device, in, sizeof device);
  device.name[BINDERFS_MAX_NAME] = '\0';  // force-terminated at byte 255
  // cused only: "NAME:SPEC" creates the device with a variant (docs/binderfs.md, differences).
  core::DeviceSpec spec = core::split_device_spec(device.name);
  auto variant = core::parse_device_variant(
      spec.variant, registry_.default_variant(), [&](const std::string& message) {
        fuse_log(FUSE_LOG_ERR, "cused: %s: device %s: variant '%s' refused: %s\n", kControlNode,
                 spec.name.c_str(), spec.variant.c_str(), message.c_str());
      });
  if (!variant) return reply_error(req, EINVAL);
  devices::DeviceRegistry::Added added = create_device(spec.name, *variant);
  if (added.error != 0) return reply_error(req, -added.error);
  // No character device exists behind a FUSE node; report cused's own numbering so that callers
  // that print major:minor see something stable and unique per device.
  device.major = 0;
  device.minor = static_cast<__u32>(added.id);
  fuse::reply_ioctl(req, 0, &device, sizeof device);
}

}  // namespace cused::binderfs

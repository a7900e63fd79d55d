// The ioctls of `binder-control`: the kernel's BINDER_CTL_ADD (S10.3), which in cused also takes
// "NAME:SPEC" to create a device with a variant, and cused's own (uapi/cused.h): read and change
// a device's variant, shrink now (docs/design.md sections 5 and 6).

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <variant>

#include "core/device_variant.h"
#include "core/sync/lock_guard.h"
#include "core/sync/mutex.h"
#include "cused/binderfs/filesystem.h"
#include "cused/fuse/request.h"
#include "uapi/binder.h"
#include "uapi/cused.h"

namespace cused::binderfs {

namespace {

void reply_error(fuse_req_t req, int err) { fuse::reply_err(req, err); }

// A fixed-size argument, copied out of the request; false if FUSE brought fewer bytes.
template <typename T>
bool read_argument(const void* in, std::size_t in_size, T& argument) {
  if (in_size < sizeof argument) return false;
  std::memcpy(&argument, in, sizeof argument);
  return true;
}

// The variant `spec` on top of `base`; on a bad spec, logs why (the ioctl can only say EINVAL)
// and returns nothing.
std::optional<core::DeviceOptions> parse_or_log(const std::string& device, const std::string& spec,
                                                const core::DeviceOptions& base) {
  return core::parse_device_variant(spec, base, [&](const std::string& message) {
    fuse_log(FUSE_LOG_ERR, "cused: binder-control: device %s: variant '%s' refused: %s\n",
             device.c_str(), spec.c_str(), message.c_str());
  });
}

// Serializes variant changes: each applies its spec to the variant it reads, so two at once
// could lose the keys of one of them.
sync::Mutex& variant_change_lock() {
  static sync::Mutex lock;
  return lock;
}

// Copies `text` into a fixed field, cut to fit and NUL-terminated.
template <std::size_t N>
void copy_text(char (&field)[N], const std::string& text) {
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), std::min(text.size(), N - 1));
}

}  // namespace

void Filesystem::control_ioctl(fuse_req_t req, unsigned cmd, const void* in, std::size_t in_size) {
  switch (cmd) {
    case BINDER_CTL_ADD:
      return add_device_ioctl(req, in, in_size);
    case uapi::CUSED_CTL_GET_VARIANT:
      return get_variant_ioctl(req, in, in_size);
    case uapi::CUSED_CTL_SET_VARIANT:
      return set_variant_ioctl(req, in, in_size);
    case uapi::CUSED_CTL_SHRINK:
      return shrink_ioctl(req);
    case uapi::CUSED_CTL_TRACE:
      return trace_ioctl(req, in, in_size);
    default:
      return reply_error(req, EINVAL);  // S10.3: binderfs's answer to any other command
  }
}

void Filesystem::add_device_ioctl(fuse_req_t req, const void* in, std::size_t in_size) {
  binderfs_device device{};
  if (!read_argument(in, in_size, device)) return reply_error(req, EFAULT);
  device.name[BINDERFS_MAX_NAME] = '\0';  // force-terminated at byte 255
  // cused only: "NAME:SPEC" creates the device with a variant (docs/binderfs.md, differences).
  core::DeviceSpec spec = core::split_device_spec(device.name);
  auto variant = parse_or_log(spec.name, spec.variant, options_.default_variant);
  if (!variant) return reply_error(req, EINVAL);
  if (int err = add_device(spec.name, *variant); err != 0) return reply_error(req, -err);
  // No character device exists behind a FUSE node; report cused's own numbering so that callers
  // that print major:minor see something stable and unique per device.
  device.major = 0;
  {
    sync::LockGuard guard(lock_);
    device.minor = static_cast<__u32>(devices_.size() - 1);
  }
  fuse::reply_ioctl(req, 0, &device, sizeof device);
}

void Filesystem::get_variant_ioctl(fuse_req_t req, const void* in, std::size_t in_size) {
  uapi::cused_device_variant argument{};
  if (!read_argument(in, in_size, argument)) return reply_error(req, EFAULT);
  argument.name[sizeof argument.name - 1] = '\0';
  auto found = device(argument.name);
  if (!found) return reply_error(req, ENOENT);
  copy_text(argument.spec, core::to_string(found->options()));
  fuse::reply_ioctl(req, 0, &argument, sizeof argument);
}

void Filesystem::set_variant_ioctl(fuse_req_t req, const void* in, std::size_t in_size) {
  uapi::cused_device_variant argument{};
  if (!read_argument(in, in_size, argument)) return reply_error(req, EFAULT);
  argument.name[sizeof argument.name - 1] = '\0';
  argument.spec[sizeof argument.spec - 1] = '\0';
  auto found = device(argument.name);
  if (!found) return reply_error(req, ENOENT);
  std::optional<core::DeviceOptions> variant;
  {
    sync::LockGuard guard(variant_change_lock());
    // Keys the spec leaves out keep the device's current values.
    variant = parse_or_log(argument.name, argument.spec, found->options());
    if (variant) found->set_options(*variant);
  }
  if (!variant) return reply_error(req, EINVAL);
  fuse_log(FUSE_LOG_INFO, "cused: device %s: variant %s for procs opened from now on\n",
           argument.name, core::to_string(*variant).c_str());
  copy_text(argument.spec, core::to_string(*variant));
  fuse::reply_ioctl(req, 0, &argument, sizeof argument);
}

void Filesystem::shrink_ioctl(fuse_req_t req) {
  if (!options_.shrink_now) return reply_error(req, ENOTTY);
  core::alloc::ReclaimResult freed = options_.shrink_now();
  uapi::cused_shrink_result result{freed.pages, freed.bytes, freed.skipped};
  fuse::reply_ioctl(req, 0, &result, sizeof result);
}

// The daemon writes the file with its own rights: only root or the daemon's user may name it.
void Filesystem::trace_ioctl(fuse_req_t req, const void* in, std::size_t in_size) {
  if (!options_.trace) return reply_error(req, ENOTTY);
  uapi::cused_trace argument{};
  if (!read_argument(in, in_size, argument)) return reply_error(req, EFAULT);
  const uid_t caller = fuse_req_ctx(req)->uid;
  if (caller != 0 && caller != geteuid()) return reply_error(req, EPERM);
  if (argument.start) {
    argument.path[sizeof argument.path - 1] = '\0';
    if (argument.path[0] != '/') return reply_error(req, EINVAL);
    if (int err = options_.trace->start(argument.path)) return reply_error(req, -err);
    fuse_log(FUSE_LOG_INFO, "cused: tracing to %s\n", argument.path);
  } else {
    if (!options_.trace->running()) return reply_error(req, ENOENT);
    host::TraceRecorder::Summary summary = options_.trace->stop();
    argument.written = summary.written;
    argument.dropped = summary.dropped;
    static_assert(core::kTraceEventTypes <= uapi::kCusedTraceEventSlots);
    std::copy(summary.dropped_by_event.begin(), summary.dropped_by_event.end(),
              argument.dropped_by_event);
    if (summary.path.size() < sizeof argument.path)
      std::memcpy(argument.path, summary.path.c_str(), summary.path.size() + 1);  // with its NUL
  }
  fuse::reply_ioctl(req, 0, &argument, sizeof argument);
}

}  // namespace cused::binderfs

// SPDX-License-Identifier: GPL-2.0-only
#include "cused/devices/control_requests.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/device_variant.h"
#include "cused/fuse/fuse.h"
#include "uapi/cused.h"

namespace cused::devices {

namespace {

// A fixed-size argument, copied out of the request; false if the caller passed fewer bytes.
template <typename T>
bool read_argument(const ControlRequest& request, T& argument) {
  if (request.argument.size() < sizeof argument) return false;
  std::memcpy(&argument, request.argument.data(), sizeof argument);
  return true;
}

template <typename T>
ControlAnswer answer(const T& argument) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&argument);
  return {0, std::vector<std::byte>(bytes, bytes + sizeof argument)};
}

ControlAnswer failure(int error) { return {error, {}}; }

// Copies `text` into a fixed field, cut to fit and NUL-terminated.
template <std::size_t N>
void copy_text(char (&field)[N], const std::string& text) {
  std::memset(field, 0, N);
  std::memcpy(field, text.data(), std::min(text.size(), N - 1));
}

ControlAnswer get_variant(const DeviceRegistry& registry, const ControlRequest& request) {
  uapi::cused_device_variant argument{};
  if (!read_argument(request, argument)) return failure(EFAULT);
  argument.name[sizeof argument.name - 1] = '\0';
  auto variant = registry.variant(argument.name);
  if (!variant) return failure(ENOENT);
  copy_text(argument.spec, core::to_string(*variant));
  return answer(argument);
}

ControlAnswer set_variant(DeviceRegistry& registry, const ControlRequest& request) {
  uapi::cused_device_variant argument{};
  if (!read_argument(request, argument)) return failure(EFAULT);
  argument.name[sizeof argument.name - 1] = '\0';
  argument.spec[sizeof argument.spec - 1] = '\0';
  DeviceRegistry::VariantChange change = registry.set_variant(argument.name, argument.spec);
  if (change.error == EINVAL)  // the ioctl can only say EINVAL: the log says why
    fuse_log(FUSE_LOG_ERR, "cused: %s: device %s: variant '%s' refused: %s\n", request.node.c_str(),
             argument.name, argument.spec, change.refusal.c_str());
  if (change.error != 0) return failure(change.error);
  std::string variant = core::to_string(change.variant);
  fuse_log(FUSE_LOG_INFO, "cused: device %s: variant %s for procs opened from now on\n",
           argument.name, variant.c_str());
  copy_text(argument.spec, variant);
  return answer(argument);
}

ControlAnswer shrink(const DeviceRegistry& registry) {
  auto freed = registry.shrink_now();
  if (!freed) return failure(ENOTTY);
  return answer(uapi::cused_shrink_result{freed->pages, freed->bytes, freed->skipped});
}

// The daemon writes the file with its own rights: only root or the daemon's user may name it.
ControlAnswer trace(const DeviceRegistry& registry, const ControlRequest& request) {
  host::TraceRecorder* recorder = registry.trace();
  if (!recorder) return failure(ENOTTY);
  uapi::cused_trace argument{};
  if (!read_argument(request, argument)) return failure(EFAULT);
  if (!may_control(request.caller_uid)) return failure(EPERM);
  if (argument.start) {
    argument.path[sizeof argument.path - 1] = '\0';
    if (argument.path[0] != '/') return failure(EINVAL);
    if (int err = recorder->start(argument.path)) return failure(-err);
    fuse_log(FUSE_LOG_INFO, "cused: tracing to %s\n", argument.path);
  } else {
    if (!recorder->running()) return failure(ENOENT);
    host::TraceRecorder::Summary summary = recorder->stop();
    argument.written = summary.written;
    argument.dropped = summary.dropped;
    static_assert(core::kTraceEventTypes <= uapi::kCusedTraceEventSlots);
    std::copy(summary.dropped_by_event.begin(), summary.dropped_by_event.end(),
              argument.dropped_by_event);
    if (summary.path.size() < sizeof argument.path)
      std::memcpy(argument.path, summary.path.c_str(), summary.path.size() + 1);  // with its NUL
  }
  return answer(argument);
}

}  // namespace

bool is_control_ioctl(unsigned cmd) {
  return cmd == uapi::CUSED_CTL_GET_VARIANT || cmd == uapi::CUSED_CTL_SET_VARIANT ||
         cmd == uapi::CUSED_CTL_SHRINK || cmd == uapi::CUSED_CTL_TRACE;
}

bool may_control(uid_t uid) { return uid == 0 || uid == geteuid(); }

ControlAnswer serve_control(DeviceRegistry& registry, const ControlRequest& request) {
  switch (request.cmd) {
    case uapi::CUSED_CTL_GET_VARIANT:
      return get_variant(registry, request);
    case uapi::CUSED_CTL_SET_VARIANT:
      return set_variant(registry, request);
    case uapi::CUSED_CTL_SHRINK:
      return shrink(registry);
    case uapi::CUSED_CTL_TRACE:
      return trace(registry, request);
    default:
      return failure(EINVAL);  // binder-control's answer to a command it does not know (S10.3)
  }
}

}  // namespace cused::devices

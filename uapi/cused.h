// SPDX-License-Identifier: GPL-2.0-only
// cused's own control ABI (docs/design.md sections 5 and 6): ioctls on `binder-control` that the
// kernel's binderfs does not have. They read and change a device's variant and ask the shrinker
// to run now; binderctl is their user.
//
// Every argument is a fixed-size struct so that FUSE forwards the ioctl in restricted mode, where
// the kernel copies exactly _IOC_SIZE(cmd) bytes in and out. The magic is cused's own, so no
// binder or binderfs command can be mistaken for one of these.
#pragma once

#include <linux/android/binderfs.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace cused::uapi {

inline constexpr unsigned kCusedIoctlMagic = 0xCB;

// Room for any variant spec: the longest valid one is well under 100 characters.
inline constexpr std::size_t kVariantSpecSize = 256;

// A device and its variant in text form (core/device_variant.h), both NUL-terminated.
struct cused_device_variant {
  char name[BINDERFS_MAX_NAME + 1];
  char spec[kVariantSpecSize];
};

// What one "shrink now" returned: pages punched out of memfds, their bytes, and pages passed
// over because their allocator was busy at the time.
struct cused_shrink_result {
  __u64 pages;
  __u64 bytes;
  __u64 skipped;
};

// `binderctl trace start FILE | stop` (docs/tracing.md): the daemon's trace file. start = 1:
// the daemon creates (truncates) `path`, absolute and NUL-terminated, and writes the binder events
// into it; start = 0: it stops, and `written` and `dropped` say what the trace held, `path` which
// file it was, and `dropped_by_event` the drops per event (indexed as core::TraceEventType,
// named by core/trace_event_names.h).
inline constexpr unsigned kCusedTraceEventSlots = 64;
struct cused_trace {
  __u32 start;
  __u32 reserved;  // 0
  __u64 written;   // out, when stopping
  __u64 dropped;   // out, when stopping
  char path[4072 - 8 * kCusedTraceEventSlots];
  __u64 dropped_by_event[kCusedTraceEventSlots];  // out, when stopping
};

// Name in; the device's current variant (every key) out. ENOENT: no such device.
inline constexpr unsigned CUSED_CTL_GET_VARIANT =
    _IOWR(kCusedIoctlMagic, 1, struct cused_device_variant);
// Name and spec in: procs opened on the device from now on get the device's variant with the
// spec's keys applied; procs already open keep theirs. The resulting variant (every key) out.
// ENOENT: no such device; EINVAL: a bad spec (the daemon's log says why).
inline constexpr unsigned CUSED_CTL_SET_VARIANT =
    _IOWR(kCusedIoctlMagic, 2, struct cused_device_variant);
// Reclaims every unused buffer page of every proc now; what that freed out.
inline constexpr unsigned CUSED_CTL_SHRINK = _IOR(kCusedIoctlMagic, 3, struct cused_shrink_result);
// Starts or stops the trace. EBUSY: a trace is being written already; ENOENT: none to stop;
// EPERM: the caller is neither root nor the daemon's user (the daemon writes the file);
// EINVAL: a relative path; else the errno of creating the file.
inline constexpr unsigned CUSED_CTL_TRACE = _IOWR(kCusedIoctlMagic, 4, struct cused_trace);

static_assert(sizeof(cused_device_variant) == 512);
static_assert(sizeof(cused_shrink_result) == 24);
static_assert(CUSED_CTL_GET_VARIANT == 0xc200cb01u);
static_assert(CUSED_CTL_SET_VARIANT == 0xc200cb02u);
static_assert(CUSED_CTL_SHRINK == 0x8018cb03u);
static_assert(sizeof(cused_trace) == 4096);
static_assert(CUSED_CTL_TRACE == 0xd000cb04u);

}  // namespace cused::uapi

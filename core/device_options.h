// SPDX-License-Identifier: GPL-2.0-only
// A device's variant as plain values (docs/design.md section 5): what `cused --device
// NAME:SPEC`, binder-control and binderctl set, with no engine behind it, so that tools which
// only parse and print variants (binderctl, binder-ab) need not link the driver.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "core/alloc/variant.h"
#include "core/sync/lock_policy.h"

namespace cused::core {

class SecurityLabelSource;  // core/security.h

// A device's variant (docs/design.md section 5): read when a proc opens, so a change applies to
// procs opened afterwards.
struct DeviceOptions {
  alloc::Variant alloc;
  // cused's TF_DEFER_COMPLETE on BC_REPLY (uapi/binder.h). Off: the flag is passed through and
  // ignored, as the kernel does with unknown flags.
  bool defer_complete = true;
  // Where BR_TRANSACTION_SEC_CTX labels come from (S4.9). Null: "unconfined" for every proc;
  // the daemon gives its devices the host LSM's label (cused/host/proc_attr_label.h).
  std::shared_ptr<SecurityLabelSource> labels;
  // lock_policy= of the proc and node locks (docs/locking.md); the context lock takes the policy
  // the device was created with.
  sync::LockPolicy lock_policy = sync::LockPolicy::kBarging;
  // exec_context=: whose scheduling a request is served at. kCaller: the calling thread's (policy,
  // nice, RT priority), as the kernel's driver runs in its caller (cused/request/
  // caller_scheduling.h); kDaemon: the daemon thread's own. Frontends apply it; core ignores it.
  enum class ExecContext : std::uint8_t { kCaller, kDaemon };
  ExecContext exec_context = ExecContext::kCaller;
  // install_latency_us=: a page installation's extra cost (alloc::AllocatorOptions), 0 = none.
  std::chrono::microseconds install_latency{0};
  // priority=: binder's priority inheritance. kMainline: S4.12's nice inheritance, as mainline
  // Linux; kAndroid: the Android common kernel's, with a node's minimum scheduling policy and
  // FLAT_BINDER_FLAG_INHERIT_RT (core/android_priority.cc).
  enum class Priority : std::uint8_t { kMainline, kAndroid };
  Priority priority = Priority::kMainline;
};

}  // namespace cused::core

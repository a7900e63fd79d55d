// SPDX-License-Identifier: GPL-2.0-only
// A freeze notification registered on a ref (binder_ref_freeze, S7.6-S7.9). Its work item is
// BR_FROZEN_BINDER while the registration lives and becomes BR_CLEAR_FREEZE_NOTIFICATION_DONE
// once it is cleared. While a BR_FROZEN_BINDER is delivered and not yet acknowledged
// (BC_FREEZE_NOTIFICATION_DONE) it sits on the holder's delivered-freeze list, and a state change
// or a clear meanwhile is remembered as "resend".
#pragma once

#include <memory>

#include "core/locks.h"
#include "core/stats.h"
#include "core/work.h"
#include "uapi/binder.h"

namespace cused::core {

class FreezeNotification final : public Work,
                                 public std::enable_shared_from_this<FreezeNotification> {
 public:
  // `inner_lock`: the holder proc's inner lock, which guards the item like every work item.
  FreezeNotification(binder_uintptr_t cookie, InnerLock& inner_lock)
      : Work(WorkType::kFrozenBinder), cookie(cookie), inner_lock(inner_lock) {}

  const binder_uintptr_t cookie;
  InnerLock& inner_lock;
  // The state the next (or the queued) BR_FROZEN_BINDER reports.
  bool is_frozen CUSED_GUARDED_BY(inner_lock) = false;
  // Delivered, BC_FREEZE_NOTIFICATION_DONE not seen yet.
  bool sent CUSED_GUARDED_BY(inner_lock) = false;
  // Queue the item again when the DONE comes: the state changed or the registration was cleared.
  bool resend CUSED_GUARDED_BY(inner_lock) = false;
  ObjCounter counter;  // S10.6 `stats`: freeze

 protected:
  std::shared_ptr<void> owner() override { return shared_from_this(); }
};

}  // namespace cused::core

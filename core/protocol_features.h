// SPDX-License-Identifier: GPL-2.0-only
// The files of binderfs's features/ directory (S10.5): each names a protocol feature this driver
// implements, and userspace (libbinder) probes them before using it. List only what core really
// does. transaction_report (netlink, S4.15) is not implemented.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace cused::core {

inline std::span<const std::string_view> features() {
  static constexpr std::array<std::string_view, 4> kFeatures{
      "oneway_spam_detection",  // BINDER_ENABLE_ONEWAY_SPAM_DETECTION, BR_ONEWAY_SPAM_SUSPECT
      "extended_error",         // BINDER_GET_EXTENDED_ERROR (S2.14)
      "freeze_notification",    // BC_REQUEST_FREEZE_NOTIFICATION ... (S7.6-S7.9)
      "defer_complete",         // cused's TF_DEFER_COMPLETE on BC_REPLY (uapi/binder.h)
  };
  return kFeatures;
}

// cused's name for priority=android (docs/variants.md): the Android common kernel's real-time
// priority inheritance has no features file there (its libbinder assumes it), so the name is
// cused's own, shown only on a mount whose default variant (`cused --variant`) has it on.
inline constexpr std::string_view kAndroidPriorityFeature = "android_priority";

}  // namespace cused::core

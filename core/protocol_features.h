// The files of binderfs's features/ directory (S10.5): each names a protocol feature this driver
// implements, and userspace (libbinder) probes them before using it. List only what core really
// does: freeze notifications (freeze_notification) come with the freeze work.
#pragma once

#include <array>
#include <span>
#include <string_view>

namespace cused::core {

inline std::span<const std::string_view> features() {
  static constexpr std::array<std::string_view, 3> kFeatures{
      "oneway_spam_detection",  // BINDER_ENABLE_ONEWAY_SPAM_DETECTION, BR_ONEWAY_SPAM_SUSPECT
      "extended_error",         // BINDER_GET_EXTENDED_ERROR (S2.14)
      "defer_complete",         // cused's TF_DEFER_COMPLETE on BC_REPLY (uapi/binder.h)
  };
  return kFeatures;
}

}  // namespace cused::core

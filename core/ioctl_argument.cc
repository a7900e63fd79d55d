// SPDX-License-Identifier: GPL-2.0-only
#include "core/ioctl_argument.h"

#include <cerrno>

#include "uapi/binder.h"

namespace cused::core {

IoctlArgument kernel_ioctl_argument(unsigned cmd) {
  auto both = [](std::size_t size) { return IoctlArgument{size, size, EFAULT}; };
  switch (cmd) {
    case BINDER_WRITE_READ:
      return both(sizeof(binder_write_read));
    case BINDER_SET_MAX_THREADS:
      return {sizeof(__u32), 0, EFAULT};
    case BINDER_SET_CONTEXT_MGR_EXT:
      return {sizeof(flat_binder_object), 0, EFAULT};
    case BINDER_VERSION:
      return {0, sizeof(binder_version), EINVAL};
    case BINDER_GET_NODE_INFO_FOR_REF:
      return both(sizeof(binder_node_info_for_ref));
    case BINDER_GET_NODE_DEBUG_INFO:
      return both(sizeof(binder_node_debug_info));
    case BINDER_FREEZE:
      return {sizeof(binder_freeze_info), 0, EFAULT};
    case BINDER_GET_FROZEN_INFO:
      return both(sizeof(binder_frozen_status_info));
    case BINDER_ENABLE_ONEWAY_SPAM_DETECTION:
      return {sizeof(__u32), 0, EFAULT};
    case BINDER_GET_EXTENDED_ERROR:
      return {0, sizeof(binder_extended_error), EFAULT};
    case BINDER_SET_CONTEXT_MGR:  // binder_ioctl_set_ctx_mgr(filp, NULL)
    case BINDER_THREAD_EXIT:      // binder_thread_release
    default:                      // SET_IDLE_TIMEOUT, SET_IDLE_PRIORITY, unknown: EINVAL
      return {};
  }
}

}  // namespace cused::core

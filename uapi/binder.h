// SPDX-License-Identifier: GPL-2.0-only
// cused's view of the binder ABI (spec S0): the distro's <linux/android/binder.h> and
// <linux/android/binderfs.h>, plus what a 6.1 header lacks (freeze notifications, pending-frozen,
// TF_DEFER_COMPLETE), with static_asserts that pin every layout and code to protocol 8.
#pragma once

#include <linux/android/binder.h>
#include <linux/android/binderfs.h>
#include <sys/ioctl.h>

#include <cstddef>
#include <cstdint>

namespace cused::uapi {

// S0.2 / S0.3: codes added after Linux 6.1. Defined here with the kernel's _IO* encodings.
struct binder_frozen_state_info {
  binder_uintptr_t cookie;
  __u32 is_frozen;
  __u32 reserved;
};

inline constexpr std::uint32_t BR_TRANSACTION_PENDING_FROZEN = _IO('r', 20);
inline constexpr std::uint32_t BR_FROZEN_BINDER = _IOR('r', 21, binder_frozen_state_info);
inline constexpr std::uint32_t BR_CLEAR_FREEZE_NOTIFICATION_DONE = _IOR('r', 22, binder_uintptr_t);

inline constexpr std::uint32_t BC_REQUEST_FREEZE_NOTIFICATION = _IOW('c', 19, binder_handle_cookie);
inline constexpr std::uint32_t BC_CLEAR_FREEZE_NOTIFICATION = _IOW('c', 20, binder_handle_cookie);
inline constexpr std::uint32_t BC_FREEZE_NOTIFICATION_DONE = _IOW('c', 21, binder_uintptr_t);

// cused extension, a BC_REPLY flag: defer BR_TRANSACTION_COMPLETE so that the replier's same
// BINDER_WRITE_READ goes on to wait for its next transaction (one ioctl per served call instead
// of two). Advertised as features/defer_complete.
inline constexpr std::uint32_t TF_DEFER_COMPLETE = 0x80;

// The Android common kernel's flat_binder_object flags (its include/uapi/linux/android/binder.h),
// which mainline lacks: a node's minimum scheduling policy beside the priority bits, and whether
// it takes a real-time caller's policy. Honoured under priority=android (docs/variants.md).
inline constexpr std::uint32_t FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT = 9;
inline constexpr std::uint32_t FLAT_BINDER_FLAG_SCHED_POLICY_MASK =
    3u << FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT;
inline constexpr std::uint32_t FLAT_BINDER_FLAG_INHERIT_RT = 0x800;
static_assert(FLAT_BINDER_FLAG_SCHED_POLICY_MASK == 0x600);
static_assert((FLAT_BINDER_FLAG_INHERIT_RT &
               (FLAT_BINDER_FLAG_ACCEPTS_FDS | FLAT_BINDER_FLAG_TXN_SECURITY_CTX |
                FLAT_BINDER_FLAG_SCHED_POLICY_MASK)) == 0);

inline constexpr std::uint32_t kProtocolVersion = 8;     // BINDER_VERSION answer (S2.8)
inline constexpr std::size_t kMaxMappedSize = 4u << 20;  // S1.4: only the first 4 MiB are used

// S0.1: ioctl request values, protocol 8 (64-bit binder_size_t / binder_uintptr_t).
static_assert(BINDER_CURRENT_PROTOCOL_VERSION == kProtocolVersion);
static_assert(BINDER_WRITE_READ == 0xc0306201u);
static_assert(BINDER_SET_IDLE_TIMEOUT == 0x40086203u);
static_assert(BINDER_SET_MAX_THREADS == 0x40046205u);
static_assert(BINDER_SET_IDLE_PRIORITY == 0x40046206u);
static_assert(BINDER_SET_CONTEXT_MGR == 0x40046207u);
static_assert(BINDER_THREAD_EXIT == 0x40046208u);
static_assert(BINDER_VERSION == 0xc0046209u);
static_assert(BINDER_GET_NODE_DEBUG_INFO == 0xc018620bu);
static_assert(BINDER_GET_NODE_INFO_FOR_REF == 0xc018620cu);
static_assert(BINDER_SET_CONTEXT_MGR_EXT == 0x4018620du);
static_assert(BINDER_FREEZE == 0x400c620eu);
static_assert(BINDER_GET_FROZEN_INFO == 0xc00c620fu);
static_assert(BINDER_ENABLE_ONEWAY_SPAM_DETECTION == 0x40046210u);
static_assert(BINDER_GET_EXTENDED_ERROR == 0xc00c6211u);
static_assert(BINDER_CTL_ADD == 0xc1086201u);

// S0.2: return codes.
static_assert(BR_ERROR == 0x80047200u);
static_assert(BR_OK == 0x00007201u);
static_assert(BR_TRANSACTION == 0x80407202u);
static_assert(BR_TRANSACTION_SEC_CTX == 0x80487202u);
static_assert(BR_REPLY == 0x80407203u);
static_assert(BR_ACQUIRE_RESULT == 0x80047204u);
static_assert(BR_DEAD_REPLY == 0x00007205u);
static_assert(BR_TRANSACTION_COMPLETE == 0x00007206u);
static_assert(BR_INCREFS == 0x80107207u && BR_ACQUIRE == 0x80107208u);
static_assert(BR_RELEASE == 0x80107209u && BR_DECREFS == 0x8010720au);
static_assert(BR_ATTEMPT_ACQUIRE == 0x8018720bu);
static_assert(BR_NOOP == 0x0000720cu && BR_SPAWN_LOOPER == 0x0000720du);
static_assert(BR_FINISHED == 0x0000720eu);
static_assert(BR_DEAD_BINDER == 0x8008720fu);
static_assert(BR_CLEAR_DEATH_NOTIFICATION_DONE == 0x80087210u);
static_assert(BR_FAILED_REPLY == 0x00007211u && BR_FROZEN_REPLY == 0x00007212u);
static_assert(BR_ONEWAY_SPAM_SUSPECT == 0x00007213u);
static_assert(BR_TRANSACTION_PENDING_FROZEN == 0x00007214u);
static_assert(BR_FROZEN_BINDER == 0x80107215u);
static_assert(BR_CLEAR_FREEZE_NOTIFICATION_DONE == 0x80087216u);

// S0.3: commands.
static_assert(BC_TRANSACTION == 0x40406300u && BC_REPLY == 0x40406301u);
static_assert(BC_ACQUIRE_RESULT == 0x40046302u && BC_FREE_BUFFER == 0x40086303u);
static_assert(BC_INCREFS == 0x40046304u && BC_ACQUIRE == 0x40046305u);
static_assert(BC_RELEASE == 0x40046306u && BC_DECREFS == 0x40046307u);
static_assert(BC_INCREFS_DONE == 0x40106308u && BC_ACQUIRE_DONE == 0x40106309u);
static_assert(BC_ATTEMPT_ACQUIRE == 0x4008630au);
static_assert(BC_REGISTER_LOOPER == 0x630bu && BC_ENTER_LOOPER == 0x630cu);
static_assert(BC_EXIT_LOOPER == 0x630du);
static_assert(BC_REQUEST_DEATH_NOTIFICATION == 0x400c630eu);
static_assert(BC_CLEAR_DEATH_NOTIFICATION == 0x400c630fu);
static_assert(BC_DEAD_BINDER_DONE == 0x40086310u);
static_assert(BC_TRANSACTION_SG == 0x40486311u && BC_REPLY_SG == 0x40486312u);
static_assert(BC_REQUEST_FREEZE_NOTIFICATION == 0x400c6313u);
static_assert(BC_CLEAR_FREEZE_NOTIFICATION == 0x400c6314u);
static_assert(BC_FREEZE_NOTIFICATION_DONE == 0x40086315u);

// S0.4: object types, flags and struct layouts.
static_assert(BINDER_TYPE_BINDER == 0x73622a85u && BINDER_TYPE_WEAK_BINDER == 0x77622a85u);
static_assert(BINDER_TYPE_HANDLE == 0x73682a85u && BINDER_TYPE_WEAK_HANDLE == 0x77682a85u);
static_assert(BINDER_TYPE_FD == 0x66642a85u && BINDER_TYPE_FDA == 0x66646185u);
static_assert(BINDER_TYPE_PTR == 0x70742a85u);
static_assert(FLAT_BINDER_FLAG_ACCEPTS_FDS == 0x100 && FLAT_BINDER_FLAG_TXN_SECURITY_CTX == 0x1000);
static_assert(TF_ONE_WAY == 0x01 && TF_ROOT_OBJECT == 0x04 && TF_STATUS_CODE == 0x08);
static_assert(TF_ACCEPT_FDS == 0x10 && TF_CLEAR_BUF == 0x20 && TF_UPDATE_TXN == 0x40);
static_assert(sizeof(binder_write_read) == 48);
static_assert(sizeof(binder_version) == 4);
static_assert(sizeof(binder_transaction_data) == 64);
static_assert(sizeof(binder_transaction_data_secctx) == 72);
static_assert(sizeof(binder_transaction_data_sg) == 72);
static_assert(sizeof(flat_binder_object) == 24);
static_assert(sizeof(binder_fd_object) == 24);
static_assert(sizeof(binder_buffer_object) == 40);
static_assert(sizeof(binder_fd_array_object) == 32);
static_assert(sizeof(binder_ptr_cookie) == 16);
static_assert(sizeof(binder_handle_cookie) == 12);
static_assert(sizeof(binder_node_debug_info) == 24);
static_assert(sizeof(binder_node_info_for_ref) == 24);
static_assert(sizeof(binder_freeze_info) == 12);
static_assert(sizeof(binder_frozen_status_info) == 12);
static_assert(sizeof(binder_extended_error) == 12);
static_assert(sizeof(binder_frozen_state_info) == 16);
static_assert(sizeof(binderfs_device) == 264);
static_assert(offsetof(binder_transaction_data, code) == 16);
static_assert(offsetof(binder_transaction_data, flags) == 20);
static_assert(offsetof(binder_transaction_data, sender_pid) == 24);
static_assert(offsetof(binder_transaction_data, data_size) == 32);
static_assert(offsetof(binder_transaction_data, data) == 48);

}  // namespace cused::uapi

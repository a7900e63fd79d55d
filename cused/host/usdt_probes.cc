// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/usdt_probes.h"

#ifdef CUSED_HAVE_SDT
// Each probe has a semaphore, which a tracer raises while it is attached (bpftrace does, and the
// kernel's uprobes with a reference counter): how the daemon knows to feed the probes with no
// trace being written (usdt_feed.h).
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#endif

#include <cstdint>

// The probes, one per core::TraceEventType, named as the event.
#define CUSED_USDT_PROBES(X)                                        \
  X(kIoctl, binder_ioctl)                                           \
  X(kIoctlDone, binder_ioctl_done)                                  \
  X(kWriteDone, binder_write_done)                                  \
  X(kReadDone, binder_read_done)                                    \
  X(kWaitForWork, binder_wait_for_work)                             \
  X(kTxnLatencyFree, binder_txn_latency_free)                       \
  X(kTransaction, binder_transaction)                               \
  X(kTransactionReceived, binder_transaction_received)              \
  X(kNodeToRef, binder_transaction_node_to_ref)                     \
  X(kRefToNode, binder_transaction_ref_to_node)                     \
  X(kRefToRef, binder_transaction_ref_to_ref)                       \
  X(kFdSend, binder_transaction_fd_send)                            \
  X(kFdRecv, binder_transaction_fd_recv)                            \
  X(kAllocBuf, binder_transaction_alloc_buf)                        \
  X(kBufferRelease, binder_transaction_buffer_release)              \
  X(kFailedBufferRelease, binder_transaction_failed_buffer_release) \
  X(kUpdatePageRange, binder_update_page_range)                     \
  X(kAllocLruStart, binder_alloc_lru_start)                         \
  X(kAllocLruEnd, binder_alloc_lru_end)                             \
  X(kFreeLruStart, binder_free_lru_start)                           \
  X(kFreeLruEnd, binder_free_lru_end)                               \
  X(kAllocPageStart, binder_alloc_page_start)                       \
  X(kAllocPageEnd, binder_alloc_page_end)                           \
  X(kUnmapUserStart, binder_unmap_user_start)                       \
  X(kUnmapUserEnd, binder_unmap_user_end)                           \
  X(kCommand, binder_command)                                       \
  X(kReturn, binder_return)                                         \
  X(kLockContended, cused_lock_contended)                           \
  X(kLockAcquired, cused_lock_acquired)                             \
  X(kLockReleased, cused_lock_released)                             \
  X(kPageInstall, cused_page_install)                               \
  X(kPageReclaim, cused_page_reclaim)                               \
  X(kShrinkerPass, cused_shrinker_pass)

#ifdef CUSED_HAVE_SDT

// The semaphores sdt.h names provider_name_semaphore, in the .probes section where tracers look
// for them; global and unmangled, since the probes' notes refer to them by that name.
#define CUSED_USDT_SEMAPHORE(type, name) \
  __attribute__((section(".probes"), visibility("hidden"))) unsigned short cused_##name##_semaphore;
CUSED_USDT_PROBES(CUSED_USDT_SEMAPHORE)
#undef CUSED_USDT_SEMAPHORE

namespace cused::host {

// A probe's name is a literal in its ELF note: one probe site per event. A probe nobody attached
// to is a nop instruction.
#define CUSED_USDT_CASE(type, name)                                                \
  case core::TraceEventType::type:                                                 \
    STAP_PROBE9(cused, name, tid, tgid, f[0], f[1], f[2], f[3], f[4], f[5], f[6]); \
    break;

void fire_usdt_probe(const core::TraceEvent& event) {
  const std::int64_t tid = event.task.tid;
  const std::int64_t tgid = event.task.tgid;
  const core::TraceEvent::Fields& f = event.fields;
  switch (event.type) { CUSED_USDT_PROBES(CUSED_USDT_CASE) }
}
#undef CUSED_USDT_CASE

// The tracer writes the semaphores from outside the process: read each anew.
#define CUSED_USDT_RAISED(type, name) \
  +*static_cast<volatile unsigned short*>(&cused_##name##_semaphore)

bool usdt_probe_attached() { return (0 CUSED_USDT_PROBES(CUSED_USDT_RAISED)) != 0; }
#undef CUSED_USDT_RAISED

bool usdt_probes_built() { return true; }

}  // namespace cused::host

#else

namespace cused::host {

void fire_usdt_probe(const core::TraceEvent&) {}
bool usdt_probe_attached() { return false; }
bool usdt_probes_built() { return false; }

}  // namespace cused::host

#endif

#include "cused/host/usdt_probes.h"

#ifdef CUSED_HAVE_SDT
#include <sys/sdt.h>
#endif

#include <cstdint>

namespace cused::host {

#ifdef CUSED_HAVE_SDT

// A probe's name is a literal in its ELF note: one probe site per event. A probe nobody attached
// to is a nop instruction.
#define CUSED_USDT_CASE(type, name)                                                \
  case core::TraceEventType::type:                                                 \
    STAP_PROBE9(cused, name, tid, tgid, f[0], f[1], f[2], f[3], f[4], f[5], f[6]); \
    break

void fire_usdt_probe(const core::TraceEvent& event) {
  const std::int64_t tid = event.task.tid;
  const std::int64_t tgid = event.task.tgid;
  const core::TraceEvent::Fields& f = event.fields;
  switch (event.type) {
    CUSED_USDT_CASE(kIoctl, binder_ioctl);
    CUSED_USDT_CASE(kIoctlDone, binder_ioctl_done);
    CUSED_USDT_CASE(kWriteDone, binder_write_done);
    CUSED_USDT_CASE(kReadDone, binder_read_done);
    CUSED_USDT_CASE(kWaitForWork, binder_wait_for_work);
    CUSED_USDT_CASE(kTxnLatencyFree, binder_txn_latency_free);
    CUSED_USDT_CASE(kTransaction, binder_transaction);
    CUSED_USDT_CASE(kTransactionReceived, binder_transaction_received);
    CUSED_USDT_CASE(kNodeToRef, binder_transaction_node_to_ref);
    CUSED_USDT_CASE(kRefToNode, binder_transaction_ref_to_node);
    CUSED_USDT_CASE(kRefToRef, binder_transaction_ref_to_ref);
    CUSED_USDT_CASE(kFdSend, binder_transaction_fd_send);
    CUSED_USDT_CASE(kFdRecv, binder_transaction_fd_recv);
    CUSED_USDT_CASE(kAllocBuf, binder_transaction_alloc_buf);
    CUSED_USDT_CASE(kBufferRelease, binder_transaction_buffer_release);
    CUSED_USDT_CASE(kFailedBufferRelease, binder_transaction_failed_buffer_release);
    CUSED_USDT_CASE(kUpdatePageRange, binder_update_page_range);
    CUSED_USDT_CASE(kAllocLruStart, binder_alloc_lru_start);
    CUSED_USDT_CASE(kAllocLruEnd, binder_alloc_lru_end);
    CUSED_USDT_CASE(kFreeLruStart, binder_free_lru_start);
    CUSED_USDT_CASE(kFreeLruEnd, binder_free_lru_end);
    CUSED_USDT_CASE(kAllocPageStart, binder_alloc_page_start);
    CUSED_USDT_CASE(kAllocPageEnd, binder_alloc_page_end);
    CUSED_USDT_CASE(kUnmapUserStart, binder_unmap_user_start);
    CUSED_USDT_CASE(kUnmapUserEnd, binder_unmap_user_end);
    CUSED_USDT_CASE(kCommand, binder_command);
    CUSED_USDT_CASE(kReturn, binder_return);
    CUSED_USDT_CASE(kLockContended, cused_lock_contended);
    CUSED_USDT_CASE(kLockAcquired, cused_lock_acquired);
    CUSED_USDT_CASE(kLockReleased, cused_lock_released);
    CUSED_USDT_CASE(kPageInstall, cused_page_install);
    CUSED_USDT_CASE(kPageReclaim, cused_page_reclaim);
    CUSED_USDT_CASE(kShrinkerPass, cused_shrinker_pass);
  }
}

#undef CUSED_USDT_CASE

#else

void fire_usdt_probe(const core::TraceEvent&) {}

#endif

}  // namespace cused::host

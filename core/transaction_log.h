// SPDX-License-Identifier: GPL-2.0-only
// The rings of the last transactions (the kernel's binder_transaction_log, S4.14, S10.6
// `transaction_log` / `failed_transaction_log`): every BC_TRANSACTION / BC_REPLY is recorded, and
// a failed one is also copied to the failed ring with its BR_ code, errno and source line.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/locks.h"

namespace cused::core {

struct TransactionLogEntry {
  enum class CallType : std::uint8_t { kCall = 0, kAsync = 1, kReply = 2 };
  int debug_id = 0;
  CallType call_type = CallType::kCall;
  pid_t from_proc = 0;
  pid_t from_thread = 0;
  pid_t to_proc = 0;
  pid_t to_thread = 0;
  std::string context_name;
  int to_node = 0;
  std::uint32_t target_handle = 0;
  std::uint64_t data_size = 0;
  std::uint64_t offsets_size = 0;
  std::uint32_t return_error = 0;  // BR_ code, 0 on success (the kernel logs BR_OK as 0 too)
  std::int32_t return_error_param = 0;
  int return_error_line = 0;  // cused's source line of the failure (the kernel's __LINE__)
};

class TransactionLog {
 public:
  static constexpr std::size_t kEntries = 32;  // ARRAY_SIZE(binder_transaction_log.entry)

  // Claims the next slot with an atomic, as the kernel does, so recording a transaction never
  // serializes the driver's procs on one lock; only a writer and a reader of the same slot meet.
  void add(const TransactionLogEntry& entry);
  // Oldest first, at most kEntries. A slot claimed but not yet written is left out, so no entry
  // is ever shown "(incomplete)".
  std::vector<TransactionLogEntry> entries() const;
  // binder_transaction_log_show: one line per entry.
  std::string print() const;

 private:
  struct Slot {
    mutable sync::SpinLock lock;
    // Which claim the entry belongs to: the ring wraps, so a slow writer of an older claim must
    // not overwrite a newer one.
    std::uint64_t claim CUSED_GUARDED_BY(lock) = 0;
    bool written CUSED_GUARDED_BY(lock) = false;
    TransactionLogEntry entry CUSED_GUARDED_BY(lock);
  };
  std::atomic<std::uint64_t> next_{0};
  std::array<Slot, kEntries> ring_;
};

// The line of one entry, without its newline.
std::string format_log_entry(const TransactionLogEntry& entry);

}  // namespace cused::core

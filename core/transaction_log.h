// The rings of the last transactions (the kernel's binder_transaction_log, S4.14, S10.6
// `transaction_log` / `failed_transaction_log`): every BC_TRANSACTION / BC_REPLY is recorded, and
// a failed one is also copied to the failed ring with its BR_ code, errno and source line.
#pragma once

#include <sys/types.h>

#include <array>
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

  void add(const TransactionLogEntry& entry) CUSED_EXCLUDES(lock_);
  // Oldest first, at most kEntries.
  std::vector<TransactionLogEntry> entries() const CUSED_EXCLUDES(lock_);
  // binder_transaction_log_show: one line per entry. Entries are written whole under the lock,
  // so none is ever shown "(incomplete)".
  std::string print() const;

 private:
  mutable sync::Mutex lock_;
  std::array<TransactionLogEntry, kEntries> ring_ CUSED_GUARDED_BY(lock_);
  std::size_t added_ CUSED_GUARDED_BY(lock_) = 0;
};

// The line of one entry, without its newline.
std::string format_log_entry(const TransactionLogEntry& entry);

}  // namespace cused::core

// SPDX-License-Identifier: GPL-2.0-only
#include "core/transaction_log.h"

#include <fmt/format.h>

namespace cused::core {

void TransactionLog::add(const TransactionLogEntry& entry) {
  std::uint64_t claim = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& slot = ring_[claim % kEntries];
  sync::LockGuard guard(slot.lock);
  if (slot.written && slot.claim > claim) return;  // a newer entry already took the slot
  slot.claim = claim;
  slot.written = true;
  slot.entry = entry;
}

std::vector<TransactionLogEntry> TransactionLog::entries() const {
  std::uint64_t end = next_.load(std::memory_order_relaxed);
  std::uint64_t begin = end > kEntries ? end - kEntries : 0;
  std::vector<TransactionLogEntry> out;
  out.reserve(end - begin);
  for (std::uint64_t claim = begin; claim < end; ++claim) {
    const Slot& slot = ring_[claim % kEntries];
    sync::LockGuard guard(slot.lock);
    if (slot.written && slot.claim == claim) out.push_back(slot.entry);
  }
  return out;
}

std::string TransactionLog::print() const {
  std::string out;
  for (const auto& entry : entries()) out += format_log_entry(entry) + "\n";
  return out;
}

std::string format_log_entry(const TransactionLogEntry& e) {
  // "call " keeps its trailing space: the kernel pads it to the width of "async" and "reply".
  std::string_view type = e.call_type == TransactionLogEntry::CallType::kReply   ? "reply"
                          : e.call_type == TransactionLogEntry::CallType::kAsync ? "async"
                                                                                 : "call ";
  return fmt::format(
      "{}: {} from {}:{} to {}:{} context {} node {} handle {} size {}:{} ret {}/{} l={}",
      e.debug_id, type, e.from_proc, e.from_thread, e.to_proc, e.to_thread, e.context_name,
      e.to_node, static_cast<std::int32_t>(e.target_handle), e.data_size, e.offsets_size,
      e.return_error, e.return_error_param, e.return_error_line);
}

}  // namespace cused::core

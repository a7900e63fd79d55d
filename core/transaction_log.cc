#include "core/transaction_log.h"

#include <fmt/format.h>

namespace cused::core {

void TransactionLog::add(const TransactionLogEntry& entry) {
  sync::LockGuard guard(lock_);
  ring_[added_++ % kEntries] = entry;
}

std::vector<TransactionLogEntry> TransactionLog::entries() const {
  sync::LockGuard guard(lock_);
  std::size_t count = std::min(added_, kEntries);
  std::vector<TransactionLogEntry> out;
  out.reserve(count);
  for (std::size_t i = added_ - count; i < added_; ++i) out.push_back(ring_[i % kEntries]);
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

// SPDX-License-Identifier: GPL-2.0-only
// The driver's debug counters (the kernel's binder_stats, S10.6 `stats`): how many of each BC_
// command a proc wrote, how many of each BR_ code it read, and how many objects of each kind
// were created and deleted. One set per driver (the kernel's global binder_stats) and one per
// proc (only its BC_/BR_ counters move, as in the kernel).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace cused::core {

// binder_stat_types, in the kernel's order (the order `stats` prints them in).
enum class ObjStat : std::uint8_t {
  kProc,
  kThread,
  kNode,
  kRef,
  kDeath,
  kTransaction,
  kTransactionComplete,
  kFreeze,
};
inline constexpr std::size_t kObjStatCount = 8;
// One slot per command number (_IOC_NR): BC_TRANSACTION .. BC_FREEZE_NOTIFICATION_DONE,
// BR_ERROR .. BR_CLEAR_FREEZE_NOTIFICATION_DONE.
inline constexpr std::size_t kCommandCount = 22;
inline constexpr std::size_t kReturnCount = 23;

class Stats {
 public:
  // Codes whose number is out of range are not counted (the kernel's bounds check).
  void count_command(std::uint32_t cmd);
  void count_return(std::uint32_t cmd);
  void created(ObjStat type) { slot(obj_created_, type).fetch_add(1, std::memory_order_relaxed); }
  void deleted(ObjStat type) { slot(obj_deleted_, type).fetch_add(1, std::memory_order_relaxed); }

  int commands(std::uint32_t cmd) const;
  int returns(std::uint32_t cmd) const;
  int active(ObjStat type) const { return total(type) - deleted_count(type); }
  int total(ObjStat type) const { return slot(obj_created_, type).load(); }

  // print_binder_stats: the non-zero counters, one per line, each line starting with `prefix`.
  void print(std::string& out, std::string_view prefix) const;

 private:
  using ObjCounts = std::array<std::atomic<int>, kObjStatCount>;
  static std::atomic<int>& slot(ObjCounts& counts, ObjStat type) {
    return counts[static_cast<std::size_t>(type)];
  }
  static const std::atomic<int>& slot(const ObjCounts& counts, ObjStat type) {
    return counts[static_cast<std::size_t>(type)];
  }
  int deleted_count(ObjStat type) const { return slot(obj_deleted_, type).load(); }

  std::array<std::atomic<int>, kCommandCount> bc_{};
  std::array<std::atomic<int>, kReturnCount> br_{};
  ObjCounts obj_created_{};
  ObjCounts obj_deleted_{};
};

// Counts one object of a kind for as long as it lives: created when attached, deleted when the
// object (this member) goes. Holds the driver's counters so that they outlive every object.
class ObjCounter {
 public:
  ObjCounter() = default;
  ~ObjCounter() {
    if (stats_) stats_->deleted(type_);
  }
  ObjCounter(const ObjCounter&) = delete;
  ObjCounter& operator=(const ObjCounter&) = delete;

  void attach(std::shared_ptr<Stats> stats, ObjStat type) {
    stats_ = std::move(stats);
    type_ = type;
    stats_->created(type_);
  }

 private:
  std::shared_ptr<Stats> stats_;
  ObjStat type_ = ObjStat::kProc;
};

// The kernel's names: "BC_TRANSACTION", "BR_REPLY", "transaction_complete"; "" when unknown.
std::string_view command_name(std::uint32_t cmd);
// Every BC_ name, in the order of their codes' _IOC_NR.
std::span<const std::string_view> command_names();
std::string_view return_name(std::uint32_t cmd);
std::string_view obj_stat_name(ObjStat type);

}  // namespace cused::core

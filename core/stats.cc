// SPDX-License-Identifier: GPL-2.0-only
#include "core/stats.h"

#include <fmt/format.h>
#include <linux/ioctl.h>

namespace cused::core {
namespace {

// Indexed by _IOC_NR of the code (binder_command_strings / binder_return_strings).
constexpr std::array<std::string_view, kCommandCount> kCommandNames{
    "BC_TRANSACTION",
    "BC_REPLY",
    "BC_ACQUIRE_RESULT",
    "BC_FREE_BUFFER",
    "BC_INCREFS",
    "BC_ACQUIRE",
    "BC_RELEASE",
    "BC_DECREFS",
    "BC_INCREFS_DONE",
    "BC_ACQUIRE_DONE",
    "BC_ATTEMPT_ACQUIRE",
    "BC_REGISTER_LOOPER",
    "BC_ENTER_LOOPER",
    "BC_EXIT_LOOPER",
    "BC_REQUEST_DEATH_NOTIFICATION",
    "BC_CLEAR_DEATH_NOTIFICATION",
    "BC_DEAD_BINDER_DONE",
    "BC_TRANSACTION_SG",
    "BC_REPLY_SG",
    "BC_REQUEST_FREEZE_NOTIFICATION",
    "BC_CLEAR_FREEZE_NOTIFICATION",
    "BC_FREEZE_NOTIFICATION_DONE",
};

constexpr std::array<std::string_view, kReturnCount> kReturnNames{
    "BR_ERROR",
    "BR_OK",
    "BR_TRANSACTION",
    "BR_REPLY",
    "BR_ACQUIRE_RESULT",
    "BR_DEAD_REPLY",
    "BR_TRANSACTION_COMPLETE",
    "BR_INCREFS",
    "BR_ACQUIRE",
    "BR_RELEASE",
    "BR_DECREFS",
    "BR_ATTEMPT_ACQUIRE",
    "BR_NOOP",
    "BR_SPAWN_LOOPER",
    "BR_FINISHED",
    "BR_DEAD_BINDER",
    "BR_CLEAR_DEATH_NOTIFICATION_DONE",
    "BR_FAILED_REPLY",
    "BR_FROZEN_REPLY",
    "BR_ONEWAY_SPAM_SUSPECT",
    "BR_TRANSACTION_PENDING_FROZEN",
    "BR_FROZEN_BINDER",
    "BR_CLEAR_FREEZE_NOTIFICATION_DONE",
};

constexpr std::array<std::string_view, kObjStatCount> kObjNames{
    "proc", "thread", "node", "ref", "death", "transaction", "transaction_complete", "freeze",
};

template <std::size_t N>
void print_counts(std::string& out, std::string_view prefix,
                  const std::array<std::atomic<int>, N>& counts,
                  const std::array<std::string_view, N>& names) {
  for (std::size_t i = 0; i < N; ++i)
    if (int value = counts[i].load(std::memory_order_relaxed))
      fmt::format_to(std::back_inserter(out), "{}{}: {}\n", prefix, names[i], value);
}

template <std::size_t N>
std::atomic<int>* counter_for(std::array<std::atomic<int>, N>& counts, std::uint32_t cmd) {
  std::size_t nr = _IOC_NR(cmd);
  return nr < N ? &counts[nr] : nullptr;
}

}  // namespace

void Stats::count_command(std::uint32_t cmd) {
  if (auto* counter = counter_for(bc_, cmd)) counter->fetch_add(1, std::memory_order_relaxed);
}

void Stats::count_return(std::uint32_t cmd) {
  if (auto* counter = counter_for(br_, cmd)) counter->fetch_add(1, std::memory_order_relaxed);
}

int Stats::commands(std::uint32_t cmd) const {
  std::size_t nr = _IOC_NR(cmd);
  return nr < kCommandCount ? bc_[nr].load() : 0;
}

int Stats::returns(std::uint32_t cmd) const {
  std::size_t nr = _IOC_NR(cmd);
  return nr < kReturnCount ? br_[nr].load() : 0;
}

void Stats::print(std::string& out, std::string_view prefix) const {
  print_counts(out, prefix, bc_, kCommandNames);
  print_counts(out, prefix, br_, kReturnNames);
  for (std::size_t i = 0; i < kObjStatCount; ++i) {
    int created = obj_created_[i].load(std::memory_order_relaxed);
    int deleted = obj_deleted_[i].load(std::memory_order_relaxed);
    if (created || deleted)
      fmt::format_to(std::back_inserter(out), "{}{}: active {} total {}\n", prefix, kObjNames[i],
                     created - deleted, created);
  }
}

std::span<const std::string_view> command_names() { return kCommandNames; }

std::string_view command_name(std::uint32_t cmd) {
  std::size_t nr = _IOC_NR(cmd);
  return nr < kCommandCount ? kCommandNames[nr] : std::string_view{};
}

std::string_view return_name(std::uint32_t cmd) {
  std::size_t nr = _IOC_NR(cmd);
  return nr < kReturnCount ? kReturnNames[nr] : std::string_view{};
}

std::string_view obj_stat_name(ObjStat type) { return kObjNames[static_cast<std::size_t>(type)]; }

}  // namespace cused::core

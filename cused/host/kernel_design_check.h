// SPDX-License-Identifier: GPL-2.0-only
// `cused check-design TREE [--patch FILE]... [--seconds N]` (docs/kernel-designs.md, "Checking
// a design"): builds TREE's binder_alloc.c (patched, in a scratch copy, when patches are given)
// as a kernel design, runs the client-shaped allocation workload of allocation_stress.h on it
// under shrinker stress, and gives the verdict of the kernel's debug checks the shim runs
// (cused/kernel_shim/runtime.c): sleeping in atomic context, WARN_ON/BUG_ON, pages leaked at
// release, buffer contents under shrinker stress. The workload runs in a child process, so that
// a file that corrupts memory is a failed check, not a dead checker.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cused::host {

struct DesignCheckOptions {
  std::string tree;  // a path, or a name under $CUSED_KERNEL_TREES (as kernel:TREE takes)
  std::vector<std::filesystem::path> patches;  // applied in order with patch -p1
  std::chrono::milliseconds duration{std::chrono::seconds(60)};
  int threads = 4;
};

// One check's outcome.
enum class CheckOutcome {
  pass,
  fail,
  known,     // only the documented finding of docs/kernel-designs.md ("Found")
  not_done,  // the check does not exist yet
};

struct CheckResult {
  std::string name;  // e.g. "sleeping in atomic context"
  CheckOutcome outcome = CheckOutcome::pass;
  unsigned long count = 0;
  std::string first;  // the first report: function, lock, file:line as the check gives them
};

struct DesignVerdict {
  std::string design;   // kernel:TREE as built
  std::string version;  // the tree's kernel version, e.g. "7.2.8"
  std::vector<std::string> patches;
  long ops = 0;
  unsigned long long reclaimed = 0;  // pages the shrinker reclaimed during the run
  std::vector<CheckResult> checks;
  bool passed() const;
  const CheckResult& check(const std::string& name) const;
};

// The checks' names, as the verdict table prints them.
inline constexpr const char* kCheckAtomicSleep = "sleeping in atomic context";
inline constexpr const char* kCheckWarn = "WARN_ON/BUG_ON";
inline constexpr const char* kCheckLockHeld = "lock held on return";
inline constexpr const char* kCheckLeak = "pages leaked at release";
inline constexpr const char* kCheckContents = "buffer contents under shrinker stress";
inline constexpr const char* kCheckLockOrder = "lock-order inversions (lockdep)";

// Runs the check; nullopt with `error` set when the tree cannot be patched, built or loaded.
std::optional<DesignVerdict> check_kernel_design(const DesignCheckOptions& options,
                                                 std::string& error);

// Whether a leak report is exactly 7.x's lost install race (docs/kernel-designs.md, "Found"):
// each -EBUSY answer of vm_insert_page was followed by a get_user_pages_remote lookup whose
// reference no path puts, so the leaked pages number at least one and at most the losses (several
// losers of one page leave that one page).
bool is_lost_install_race(const std::string& line);

// The verdict as `cused check-design` prints it: a header with the kernel version, one row per
// check, and the overall verdict.
std::string format_verdict(const DesignVerdict& verdict);

}  // namespace cused::host

// SPDX-License-Identifier: GPL-2.0-only
// The host LSM's label of a sender for BR_TRANSACTION_SEC_CTX (S4.9, core/security.h): what the
// daemon's devices use, read from /proc/<pid>/attr/current (SELinux, AppArmor, Smack).
#pragma once

#include <sys/types.h>

#include <string>

#include "core/security.h"

namespace cused::host {

// The label without its trailing newline; `fallback` when the host has none or the file cannot
// be read.
class ProcAttrLabel final : public core::SecurityLabelSource {
 public:
  explicit ProcAttrLabel(std::string fallback, std::string proc_root = "/proc")
      : fallback_(std::move(fallback)), proc_root_(std::move(proc_root)) {}
  int label(pid_t pid, std::string& out) override;

 private:
  const std::string fallback_;
  const std::string proc_root_;
};

}  // namespace cused::host

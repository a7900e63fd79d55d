// SPDX-License-Identifier: GPL-2.0-only
// The sender's security label for BR_TRANSACTION_SEC_CTX (S4.9). The kernel asks the LSM and
// fails the transaction when none provides a label, which breaks servicemanagers that request
// sender contexts on hosts without SELinux. cused takes the host's label when it has one and
// otherwise a configured fallback, so the request always works. The host's label is read by
// cused/host/proc_attr_label.h, which the daemon gives its devices; core alone labels every proc
// alike (FixedLabel).
#pragma once

#include <sys/types.h>

#include <string>

namespace cused::core {

class SecurityLabelSource {
 public:
  virtual ~SecurityLabelSource() = default;
  // The label of thread group `pid`, as the bytes the receiver gets: NUL-terminated, the NUL
  // counted (SELinux reports it that way). Returns 0, or -errno to fail the transaction.
  virtual int label(pid_t pid, std::string& out) = 0;
};

// Every proc carries the same label.
class FixedLabel final : public SecurityLabelSource {
 public:
  explicit FixedLabel(std::string label) : label_(std::move(label)) {}
  int label(pid_t pid, std::string& out) override;

 private:
  const std::string label_;
};

// `label` as the receiver gets it (SecurityLabelSource::label's `out`). Returns 0.
int label_bytes(std::string label, std::string& out);

// The fallback label when nothing else is configured.
inline constexpr const char* kDefaultSecurityLabel = "unconfined";

}  // namespace cused::core

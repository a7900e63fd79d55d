// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/proc_attr_label.h"

#include "cused/host/read_small_file.h"

namespace cused::host {

int ProcAttrLabel::label(pid_t pid, std::string& out) {
  // No label (the file is missing, or its read fails: EINVAL where no LSM provides one) is not
  // an error: the fallback stands in for it (docs/binderfs.md, S4.9).
  std::string text;
  read_small_file(proc_root_ + "/" + std::to_string(pid) + "/attr/current", text);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return core::label_bytes(text.empty() ? fallback_ : std::move(text), out);
}

}  // namespace cused::host

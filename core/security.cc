#include "core/security.h"

#include "core/read_small_file.h"

namespace cused::core {
namespace {

int with_terminator(std::string label, std::string& out) {
  out = std::move(label);
  out.push_back('\0');
  return 0;
}

}  // namespace

int FixedLabel::label(pid_t, std::string& out) { return with_terminator(label_, out); }

int ProcAttrLabel::label(pid_t pid, std::string& out) {
  // No label (the file is missing, or its read fails: EINVAL where no LSM provides one) is not
  // an error: the fallback stands in for it (docs/binderfs.md, S4.9).
  std::string text;
  read_small_file(proc_root_ + "/" + std::to_string(pid) + "/attr/current", text);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return with_terminator(text.empty() ? fallback_ : std::move(text), out);
}

}  // namespace cused::core

#include "core/security.h"

#include <fstream>
#include <iterator>

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
  std::ifstream file(proc_root_ + "/" + std::to_string(pid) + "/attr/current");
  std::string text;
  if (file) text.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return with_terminator(text.empty() ? fallback_ : std::move(text), out);
}

}  // namespace cused::core

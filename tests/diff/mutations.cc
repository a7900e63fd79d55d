// SPDX-License-Identifier: GPL-2.0-only
// The exhaustive mutation test of docs/binderfs.md's deviation rules (issue 48,
// docs/reliability.md "Differential testing"): every one-line change of every corpus kernel
// trace, fed back as if it were cused's trace on each path (fuse, run), must read as a
// divergence unless it is exactly a rule's documented case. The changes: the line deleted; each
// number one up and one down (an `ls`/`lw` count minus one among them); the extended error set
// to each of BR_FAILED_REPLY -1/-22/-14 and BR_DEAD_REPLY; each BR_ return removed, or one added
// at the end. Prints, per rule, the changes it accepted; fails on any other acceptance.
//
//   diff-mutations CORPUS_DIR
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "tests/diff/compare.h"
#include "tests/diff/trace_line.h"

namespace {

namespace fs = std::filesystem;
using cused::diff::parse_trace_line;
using cused::diff::ParsedTrace;
using cused::diff::Trace;
using cused::diff::TraceLine;
using cused::diff::Verdict;

struct Mutation {
  std::size_t line;  // the kernel's line, from 0
  bool deleted = false;
  std::string text;  // the changed line
  std::string what;  // "deleted", "number up", "ee -> BR_FAILED_REPLY -1", ...
};

// Every one-line change of `line` (not the deletion).
std::vector<Mutation> changes_of(std::size_t at, const std::string& line) {
  std::vector<Mutation> out;
  for (std::size_t i = 0; i < line.size();) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) {
      i++;
      continue;
    }
    std::size_t end = i;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) end++;
    std::string digits = line.substr(i, end - i);
    if (digits.size() <= 18) {
      unsigned long long n = std::stoull(digits);
      out.push_back(
          {at, false, line.substr(0, i) + std::to_string(n + 1) + line.substr(end), "number up"});
      if (n > 0)
        out.push_back({at, false, line.substr(0, i) + std::to_string(n - 1) + line.substr(end),
                       "number down"});
    }
    i = end;
  }
  auto ee = line.rfind(" | ret 0 ee ");
  if (ee != std::string::npos) {
    for (const char* to :
         {"BR_FAILED_REPLY -1", "BR_FAILED_REPLY -22", "BR_FAILED_REPLY -14", "BR_DEAD_REPLY 0"}) {
      std::string changed = line.substr(0, ee) + " | ret 0 ee " + to;
      if (changed != line) out.push_back({at, false, changed, fmt::format("ee -> {}", to)});
    }
  }
  // The returns: "rc 8/512: BR_NOOP; BR_TRANSACTION_COMPLETE; |".
  auto rc = line.find(" rc ");
  auto colon = rc == std::string::npos ? rc : line.find(": ", rc);
  auto bar = colon == std::string::npos ? colon : line.find(" |", colon);
  if (bar != std::string::npos) {
    std::string head = line.substr(0, colon + 1), tail = line.substr(bar);
    std::string returns = line.substr(colon + 1, bar - colon - 1);  // " BR_NOOP; X;"
    std::vector<std::size_t> starts;
    for (std::size_t at_return = 0;
         (at_return = returns.find(" BR_", at_return)) != std::string::npos; at_return++)
      starts.push_back(at_return);
    for (std::size_t r = 0; r < starts.size(); r++) {
      std::size_t end = returns.find(';', starts[r]);
      if (end == std::string::npos) continue;
      out.push_back({at, false,
                     head + returns.substr(0, starts[r]) + returns.substr(end + 1) + tail,
                     "return removed"});
    }
    for (const char* added :
         {"BR_NOOP", "BR_TRANSACTION_COMPLETE", "BR_FAILED_REPLY", "BR_DEAD_REPLY"})
      out.push_back(
          {at, false, head + returns + " " + added + ";" + tail, fmt::format("{} added", added)});
  }
  return out;
}

// The documented cases a one-line change can make, rule by rule: the change must be exactly one
// of these, at the line the rule matched, for an acceptance to count.
bool documented_case(const std::string& rule, const Mutation& m, const TraceLine& kernel) {
  auto fd = kernel.first_fd_command();
  bool to_eperm = m.what == "ee -> BR_FAILED_REPLY -1";
  if (rule == "fds_refused (EINVAL after the fd)")
    return to_eperm && fd && kernel.failed_with("BR_FAILED_REPLY", "-22");
  // The kernel took an fd-carrying transaction with no read: cused's refusal differs only in
  // its extended error.
  if (rule == "fds_refused (sent)")
    return to_eperm && fd && kernel.read_size == 0 && kernel.failed_with("BR_OK", "0") &&
           kernel.write_consumed == kernel.bytes_through(*fd);
  if (rule == "fds_refused (EBADF)")
    return to_eperm && fd && kernel.failed_with("BR_FAILED_REPLY", "-9");
  if (rule == "fds_refused (EFAULT after fds only)")
    return to_eperm && fd && kernel.failed_with("BR_FAILED_REPLY", "-14");
  // The caller of a refused fd reply whose read was too small for the reply: only its extended
  // error differs.
  if (rule == "fd_reply_refused_to_caller")
    return to_eperm && kernel.failed_with("BR_OK", "0") && !kernel.has_return("BR_REPLY");
  if (rule == "undelivered_buffer")
    return m.deleted && kernel.kind == TraceLine::Kind::kState &&
           kernel.rest.starts_with("   buffer ") && kernel.rest.ends_with(" delivered");
  return false;  // munmap_unseen, release_race, undelivered_buffer_node, fds_refused (sent):
                 // no one-line change makes their case
}

Trace read_trace(const fs::path& path) {
  Trace lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: diff-mutations CORPUS_DIR\n");
    return 2;
  }
  std::vector<fs::path> traces;
  for (const auto& entry : fs::directory_iterator(argv[1]))
    if (entry.path().string().ends_with(".kernel.trace")) traces.push_back(entry.path());
  std::sort(traces.begin(), traces.end());
  std::size_t mutations = 0, diverged = 0, unchanged = 0, wrong = 0;
  std::map<std::string, std::vector<std::string>> accepted;  // "rule on path (change)" -> where
  for (const auto& path : traces) {
    Trace text = read_trace(path);
    ParsedTrace kernel(text);
    std::string name = path.filename().string();
    for (std::size_t i = 0; i < text.size(); i++) {
      std::vector<Mutation> all = changes_of(i, text[i]);
      all.push_back({i, true, "", "deleted"});
      for (const Mutation& m : all) {
        TraceLine changed = parse_trace_line(m.text);
        std::vector<const TraceLine*> cused = kernel.pointers;
        if (m.deleted)
          cused.erase(cused.begin() + static_cast<long>(i));
        else
          cused[i] = &changed;
        if (!m.deleted && m.text == text[i]) {
          unchanged++;
          continue;
        }
        for (const char* on : {"fuse", "run"}) {
          mutations++;
          Verdict v = cused::diff::compare_lines(kernel.pointers, cused, on);
          if (v.kind == Verdict::kDiverged) {
            diverged++;
            continue;
          }
          bool exact = v.documented.size() == 1 && v.documented.front().line == i + 1 &&
                       documented_case(v.documented.front().rule, m, *kernel.pointers[i]);
          if (exact) {
            accepted[fmt::format("{} on {} ({})", v.documented.front().rule, on, m.what)].push_back(
                fmt::format("{}:{}", name.substr(0, name.find('.')), i + 1));
            continue;
          }
          wrong++;
          fmt::print("ACCEPTED {} line {} on {} ({}): {}\n  kernel: {}\n  cused:  {}\n", name,
                     i + 1, on, m.what,
                     v.documented.empty() ? std::string("as the same")
                                          : "as " + v.documented.front().rule + " at line " +
                                                std::to_string(v.documented.front().line),
                     text[i], m.deleted ? "(deleted)" : m.text);
        }
      }
    }
  }
  fmt::print(
      "{} traces, {} one-line changes compared (both paths): {} diverged, {} accepted as "
      "a rule's documented case, {} accepted otherwise\n",
      traces.size(), mutations, diverged, mutations - diverged - wrong, wrong);
  for (const auto& [what, where] : accepted)
    fmt::print("  accepted: {} x {}: {}\n", where.size(), what, fmt::join(where, " "));
  return wrong == 0 && traces.size() > 300 ? 0 : 1;
}

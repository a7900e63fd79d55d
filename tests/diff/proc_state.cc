// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/proc_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <regex>
#include <sstream>

namespace cused::diff {

namespace {

const std::regex kHeader(R"(^(binder proc state:|proc \d+|context \S+|\s+variant: .*)$)");
const std::regex kThread(R"(^(\s*)thread (\d+): l ([0-9a-f]+) need_return (\d+) tr \d+$)");
const std::regex kNode(
    R"(^(\s*)node (\d+): u([0-9a-f]+) c([0-9a-f]+)(?: pri \S+)? hs (\d+) hw (\d+) ls (\d+) lw (\d+) is (\d+) iw (\d+) tr \d+(?: proc((?: \d+)+))?$)");
const std::regex kRef(R"(^(\s*)ref \d+: desc (\d+) (dead )?node (\d+) s (\d+) w (\d+) d (\S+)$)");
const std::regex kBuffer(R"(^(\s*)buffer \d+: ([0-9a-f]+) size (\d+:\d+:\d+) (\w+)$)");
const std::regex kTransaction(
    R"(^(\s*)((?:outgoing|incoming|bad|pending|pending async) transaction) \d+: \S+ from (\d+):(\d+) to (\d+):(\d+) code ([0-9a-f]+) flags ([0-9a-f]+) pri (\S+?)(?: a\d)? r(\d)(?: elapsed \d+ms)?(.*)$)");
const std::regex kTransactionBuffer(
    R"(^(?: node (\d+))? size (\d+:\d+) (?:offset|data) ([0-9a-f]+)$)");
const std::regex kNodeWork(R"(^(\s*)node work \d+: u([0-9a-f]+) c([0-9a-f]+)$)");

std::uint64_t hex(const std::string& text) { return std::stoull(text, nullptr, 16); }
std::string trimmed_hex(const std::string& text) { return fmt::format("{:x}", hex(text)); }

std::string role_of(const std::map<pid_t, std::string>& roles, const std::string& id) {
  pid_t value = std::stoi(id);
  if (value == 0) return "0";
  auto it = roles.find(value);
  return it == roles.end() ? "other" : it->second;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

class Normaliser {
 public:
  Normaliser(const std::vector<ProcStateText>& procs, const Roles& roles)
      : procs_(procs), roles_(roles) {
    for (const auto& proc : procs_) name_nodes(proc);
  }

  std::vector<std::string> lines() {
    std::vector<std::string> out;
    for (const auto& proc : procs_) {
      for (auto& line : sorted_blocks(proc))
        out.push_back(fmt::format("state {}: {}", proc.role, line));
    }
    return out;
  }

 private:
  // A node's debug id is a global counter; its owner and pointer say which it is on any driver.
  void name_nodes(const ProcStateText& proc) {
    std::smatch m;
    for (const auto& line : lines_of(proc.text)) {
      if (std::regex_match(line, m, kNode))
        node_names_[m[2].str()] = fmt::format("{}:u{}", proc.role, trimmed_hex(m[3].str()));
    }
  }

  std::string node_name(const std::string& id) const {
    auto it = node_names_.find(id);
    return it == node_names_.end() ? "unlisted" : it->second;
  }

  std::string offset(const ProcStateText& proc, const std::string& address) const {
    std::uint64_t value = hex(address);
    if (proc.space_base && value >= proc.space_base) value -= proc.space_base;
    return fmt::format("@{:#x}", value);
  }

  // Threads are listed by tid, which differs between runs: each thread's block (its line and the
  // indented lines below it) is ordered by the thread's role instead.
  std::vector<std::string> sorted_blocks(const ProcStateText& proc) const {
    std::vector<std::vector<std::string>> threads;
    std::vector<std::string> before, after;
    bool in_thread = false;
    for (const auto& raw : lines_of(proc.text)) {
      if (std::regex_match(raw, kHeader)) continue;
      bool is_thread = std::regex_match(raw, kThread);
      std::string line = normalise(proc, raw);
      bool indented = line.rfind("    ", 0) == 0;
      if (is_thread) {
        threads.push_back({line});
        in_thread = true;
      } else if (in_thread && indented) {
        threads.back().push_back(line);
      } else {
        in_thread = false;
        (threads.empty() ? before : after).push_back(line);
      }
    }
    std::stable_sort(threads.begin(), threads.end());
    std::vector<std::string> out = before;
    for (const auto& block : threads) out.insert(out.end(), block.begin(), block.end());
    out.insert(out.end(), after.begin(), after.end());
    return out;
  }

  std::string normalise(const ProcStateText& proc, const std::string& line) const {
    std::smatch m;
    if (std::regex_match(line, m, kThread))
      return fmt::format("{}thread {}: l {} need_return {}", m[1].str(),
                         role_of(roles_.tids, m[2].str()), m[3].str(), m[4].str());
    if (std::regex_match(line, m, kNode)) return node(m);
    if (std::regex_match(line, m, kRef))
      return fmt::format("{}ref desc {} {}node {} s {} w {} d {}", m[1].str(), m[2].str(),
                         m[3].str(), node_name(m[4].str()), m[5].str(), m[6].str(),
                         death_set(m[7].str()) ? "set" : "0");
    if (std::regex_match(line, m, kBuffer))
      return fmt::format("{}buffer {} size {} {}", m[1].str(), offset(proc, m[2].str()), m[3].str(),
                         m[4].str());
    if (std::regex_match(line, m, kTransaction)) return transaction(proc, m);
    if (std::regex_match(line, m, kNodeWork))
      return fmt::format("{}node work u{} c{}", m[1].str(), trimmed_hex(m[2].str()),
                         trimmed_hex(m[3].str()));
    return line;
  }

  std::string node(const std::smatch& m) const {
    std::vector<std::string> holders;
    std::istringstream pids(m[11].str());
    for (std::string pid; pids >> pid;) holders.push_back(role_of(roles_.pids, pid));
    std::sort(holders.begin(), holders.end());
    std::string line = fmt::format("{}node u{} c{} hs {} hw {} ls {} lw {} is {} iw {}", m[1].str(),
                                   trimmed_hex(m[3].str()), trimmed_hex(m[4].str()), m[5].str(),
                                   m[6].str(), m[7].str(), m[8].str(), m[9].str(), m[10].str());
    if (!holders.empty()) line += " proc " + fmt::format("{}", fmt::join(holders, " "));
    return line;
  }

  std::string transaction(const ProcStateText& proc, const std::smatch& m) const {
    auto endpoint = [&](const std::string& pid, const std::string& tid) {
      return fmt::format("{}:{}", role_of(roles_.pids, pid), role_of(roles_.tids, tid));
    };
    std::string line =
        fmt::format("{}{} from {} to {} code {} flags {} pri {} r{}", m[1].str(), m[2].str(),
                    endpoint(m[3].str(), m[4].str()), endpoint(m[5].str(), m[6].str()), m[7].str(),
                    m[8].str(), m[9].str(), m[10].str());
    std::string rest = m[11].str();
    std::smatch b;
    if (std::regex_match(rest, b, kTransactionBuffer)) {
      if (b[1].matched) line += " node " + node_name(b[1].str());
      return line + fmt::format(" size {} {}", b[2].str(), offset(proc, b[3].str()));
    }
    return line + rest;
  }

  // The kernel prints the death record's address (hashed), cused a value of its own: whether one
  // is registered is what both say.
  static bool death_set(const std::string& text) {
    return text.find_first_not_of("0x") != std::string::npos && text != "(null)";
  }

  const std::vector<ProcStateText>& procs_;
  const Roles& roles_;
  std::map<std::string, std::string> node_names_;
};

}  // namespace

std::vector<std::string> normalise_proc_states(const std::vector<ProcStateText>& procs,
                                               const Roles& roles) {
  return Normaliser(procs, roles).lines();
}

}  // namespace cused::diff

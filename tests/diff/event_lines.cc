// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/event_lines.h"

#include <fmt/format.h>

#include <array>
#include <map>
#include <sstream>

#include "cused/host/ftrace_line.h"

namespace cused::diff {

namespace {

enum class FieldKind { kLiteral, kTransaction, kNode, kRef, kAddress, kProc, kThread };

FieldKind kind_of(std::string_view key) {
  static const std::map<std::string_view, FieldKind, std::less<>> kinds{
      {"transaction", FieldKind::kTransaction},
      {"dest_node", FieldKind::kNode},
      {"node", FieldKind::kNode},
      {"src_ref", FieldKind::kRef},
      {"dest_ref", FieldKind::kRef},
      {"arg", FieldKind::kAddress},
      {"dest_proc", FieldKind::kProc},
      {"proc", FieldKind::kProc},
      {"dest_thread", FieldKind::kThread},
  };
  auto it = kinds.find(key);
  return it == kinds.end() ? FieldKind::kLiteral : it->second;
}

// One task's numbering: each id or address by the order it first appears in the task's events.
class TaskNumbering {
 public:
  std::string number(FieldKind kind, const std::string& value) {
    static constexpr std::array<const char*, 4> prefixes{"", "t", "n", "r"};
    auto& seen = seen_[static_cast<std::size_t>(kind)];
    auto [it, added] = seen.emplace(value, seen.size() + 1);
    return fmt::format("{}{}", prefixes[static_cast<std::size_t>(kind)], it->second);
  }

 private:
  std::array<std::map<std::string, std::size_t>, 4> seen_;
};

std::string role_of(const std::map<pid_t, std::string>& roles, const std::string& id) {
  if (id == "0") return id;  // no proc or thread (a oneway's dest_thread, a reply's from)
  auto it = roles.find(static_cast<pid_t>(std::stol(id)));
  return it == roles.end() ? "other" : it->second;
}

class EventNormaliser {
 public:
  explicit EventNormaliser(const Roles& roles) : roles_(roles) {}

  std::optional<std::string> line(std::string_view text) {
    auto event = host::parse_ftrace_line(text);
    if (!event || !compared_event(event->event)) return std::nullopt;
    auto role = roles_.tids.find(event->tid);
    std::string task = role == roles_.tids.end() ? "other" : role->second;
    return fmt::format("{} {}: {}", task, event->event, fields(tasks_[task], event->text));
  }

 private:
  std::string fields(TaskNumbering& numbering, const std::string& text) {
    std::istringstream in(text);
    std::string out, token, previous;
    while (in >> token) {
      if (!out.empty()) out += ' ';
      out +=
          previous == "from" || previous == "to" ? proc_and_thread(token) : field(numbering, token);
      previous = token;
    }
    return out;
  }

  // "612:618" in binder_txn_latency_free: a pid and a tid.
  std::string proc_and_thread(const std::string& token) {
    auto colon = token.find(':');
    if (colon == std::string::npos) return token;
    return role_of(roles_.pids, token.substr(0, colon)) + ":" +
           role_of(roles_.tids, token.substr(colon + 1));
  }

  std::string field(TaskNumbering& numbering, const std::string& token) {
    auto equals = token.find('=');
    if (equals == std::string::npos) return token;
    std::string key = token.substr(0, equals), value = token.substr(equals + 1);
    switch (FieldKind kind = kind_of(key)) {
      case FieldKind::kLiteral:
        return token;
      case FieldKind::kProc:
        return key + "=" + role_of(roles_.pids, value);
      case FieldKind::kThread:
        return key + "=" + role_of(roles_.tids, value);
      case FieldKind::kAddress:
        // Where the caller's argument happens to lie: a slot opened again is a new process whose
        // stacks may or may not land where the old one's were, differently on each machine, so
        // not even the address's identity compares.
        return key + "=" + (value == "0" ? value : "addr");
      default:
        return key + "=" + (value == "0" ? value : numbering.number(kind, value));
    }
  }

  const Roles& roles_;
  std::map<std::string, TaskNumbering> tasks_;
};

}  // namespace

bool compared_event(std::string_view name) {
  static constexpr std::array<std::string_view, 6> never_emitted{"binder_lock",
                                                                 "binder_locked",
                                                                 "binder_unlock",
                                                                 "binder_set_priority",
                                                                 "binder_unmap_kernel_start",
                                                                 "binder_unmap_kernel_end"};
  if (name.starts_with("cused_")) return false;
  for (auto n : never_emitted)
    if (n == name) return false;
  return name.starts_with("binder_");
}

std::vector<std::string> normalise_events(const std::vector<std::string>& lines,
                                          const Roles& roles) {
  EventNormaliser normaliser(roles);
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (auto normalised = normaliser.line(line)) out.push_back(std::move(*normalised));
  }
  return out;
}

std::string_view event_role(std::string_view normalised) {
  return normalised.substr(0, normalised.find(' '));
}

std::string_view event_text(std::string_view normalised) {
  auto space = normalised.find(' ');
  return space == std::string_view::npos ? std::string_view{} : normalised.substr(space + 1);
}

}  // namespace cused::diff

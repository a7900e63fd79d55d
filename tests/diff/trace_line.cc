// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/trace_line.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <regex>

#include "core/stats.h"
#include "uapi/binder.h"

namespace cused::diff {

namespace {

constexpr std::array<std::uint32_t, 22> kCommands = {
    BC_TRANSACTION,
    BC_REPLY,
    BC_ACQUIRE_RESULT,
    BC_FREE_BUFFER,
    BC_INCREFS,
    BC_ACQUIRE,
    BC_RELEASE,
    BC_DECREFS,
    BC_INCREFS_DONE,
    BC_ACQUIRE_DONE,
    BC_ATTEMPT_ACQUIRE,
    BC_REGISTER_LOOPER,
    BC_ENTER_LOOPER,
    BC_EXIT_LOOPER,
    BC_REQUEST_DEATH_NOTIFICATION,
    BC_CLEAR_DEATH_NOTIFICATION,
    BC_DEAD_BINDER_DONE,
    BC_TRANSACTION_SG,
    BC_REPLY_SG,
    uapi::BC_REQUEST_FREEZE_NOTIFICATION,
    uapi::BC_CLEAR_FREEZE_NOTIFICATION,
    uapi::BC_FREEZE_NOTIFICATION_DONE,
};

std::vector<std::string> split(std::string_view text, char by) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(by, start)) != std::string_view::npos; start = at + 1)
    out.emplace_back(text.substr(start, at - start));
  out.emplace_back(text.substr(start));
  return out;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return std::string(text);
}

// " BC_TRANSACTION[fd,obj] BC_FREE_BUFFER" into its commands.
std::vector<SentCommand> parse_sent(std::string_view text) {
  std::vector<SentCommand> out;
  for (const std::string& word : split(trimmed(text), ' ')) {
    if (word.empty()) continue;
    SentCommand command;
    auto bracket = word.find('[');
    command.name = word.substr(0, bracket);
    if (bracket != std::string::npos) {
      std::string inside = word.substr(bracket + 1, word.size() - bracket - 2);
      if (inside == "?")
        command.unread_parcel = true;
      else if (!inside.empty())
        command.objects = split(inside, ',');
    }
    out.push_back(std::move(command));
  }
  return out;
}

// "ret 0 wc 68/68 rc 8/512: BR_NOOP; BR_TRANSACTION_COMPLETE;" into `line`.
void parse_write_read_answer(std::string_view text, TraceLine& line) {
  static const std::regex head(R"(^ret (\S+) wc (\d+)/(\d+) rc (\d+)/(\d+):(.*)$)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, head)) return;
  auto number = [&](int i) { return std::stoull(m[i].str()); };
  line.ret = m[1].str();
  line.write_consumed = number(2), line.write_size = number(3);
  line.read_consumed = number(4), line.read_size = number(5);
  for (const std::string& item : split(m[6].str(), ';')) {
    std::string one = trimmed(item);
    if (!one.empty()) line.returns.push_back(one);
  }
}

void parse_extended_error(std::string_view text, TraceLine& line) {
  static const std::regex ee(R"(^ret 0 ee (\S+) (\S+)$)");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_match(text.begin(), text.end(), m, ee))
    line.ee_command = m[1].str(), line.ee_param = m[2].str();
}

void parse_answer(std::string_view body, TraceLine& line) {
  line.rest = std::string(body);
  if (body == "parked" || body == "no answer") {
    line.kind = TraceLine::Kind::kParked;
    line.op = std::string(body);
    return;
  }
  auto parts = split(body, '|');
  if (body.starts_with("write_read") && parts.size() == 3) {
    line.op = "write_read";
    line.sent =
        parse_sent(std::string_view(parts[0]).substr(std::string_view("write_read").size()));
    parse_write_read_answer(trimmed(parts[1]), line);
    parse_extended_error(trimmed(parts[2]), line);
    return;
  }
  if (body.starts_with("read ") && parts.size() == 2) {
    line.op = "read";
    parse_write_read_answer(trimmed(parts[0]).substr(5), line);
    parse_extended_error(trimmed(parts[1]), line);
    return;
  }
  // "flush ret 0", "ioctl 0x400c620e ret EINVAL", "open space 4096 nonblock 0: ...", "killed".
  auto ret = body.find(" ret ");
  line.op = trimmed(body.substr(0, std::min(ret, body.find(':'))));
  if (ret != std::string_view::npos) {
    auto value = body.substr(ret + 5);
    line.ret = std::string(value.substr(0, value.find(' ')));
  }
}

}  // namespace

bool SentCommand::carries_fds() const {
  return std::any_of(objects.begin(), objects.end(),
                     [](const std::string& kind) { return kind == "fd" || kind == "fda"; });
}

bool TraceLine::has_return(std::string_view name) const {
  return std::any_of(returns.begin(), returns.end(), [&](const std::string& item) {
    return item == name || item.starts_with(std::string(name) + " ");
  });
}

std::optional<std::size_t> TraceLine::first_fd_command() const {
  for (std::size_t i = 0; i < sent.size(); i++)
    if (sent[i].carries_fds()) return i;
  return std::nullopt;
}

std::optional<std::uint64_t> TraceLine::bytes_through(std::size_t index) const {
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= index && i < sent.size(); i++) {
    auto bytes = command_bytes(sent[i].name);
    if (!bytes) return std::nullopt;
    total += *bytes;
  }
  return total;
}

std::size_t TraceLine::commands_consumed() const {
  std::size_t consumed = 0;
  for (std::size_t i = 0; i < sent.size(); i++) {
    auto bytes = bytes_through(i);
    if (!bytes || *bytes > write_consumed) break;
    consumed = i + 1;
  }
  return consumed;
}

std::optional<std::uint64_t> command_bytes(std::string_view name) {
  for (std::uint32_t cmd : kCommands)
    if (core::command_name(cmd) == name) return sizeof cmd + _IOC_SIZE(cmd);
  return std::nullopt;
}

TraceLine parse_trace_line(std::string_view text) {
  static const std::regex head(
      R"(^(\d+) (?:state (s\d+):(.*)|(s\d+)(\.t\d+|\.main)?: (?:\(call of step (\d+)\) )?(.*))$)");
  TraceLine line;
  line.text = std::string(text);
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(text.begin(), text.end(), m, head)) return line;
  line.step = m[1].str();
  if (m[2].matched) {
    line.kind = TraceLine::Kind::kState;
    line.slot = m[2].str();
    line.rest = m[3].str();
    return line;
  }
  line.slot = m[4].str();
  line.call_of = m[6].str();
  if (m[5].matched) {
    line.thread = line.slot + m[5].str();
    line.kind = TraceLine::Kind::kAnswer;
  } else {
    line.kind = TraceLine::Kind::kSlot;
  }
  parse_answer(m[7].str(), line);
  return line;
}

}  // namespace cused::diff

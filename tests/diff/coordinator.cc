// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/coordinator.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/diff/proc_state.h"
#include "tests/diff/slot_process.h"
#include "tests/diff/step_decoder.h"
#include "tests/diff/wire.h"
#include "tests/fuzz/script.h"

namespace cused::diff {

namespace {

using Clock = std::chrono::steady_clock;
using fuzz::Op;
using fuzz::ScriptInput;
using namespace std::chrono_literals;

// The in-process fuzzer's bound (tests/fuzz/script.cc).
constexpr std::size_t kMaxSteps = 400;
// A call that cannot park must answer within this, or the trace says it hung.
constexpr auto kAnswerTimeout = 5s;
constexpr auto kReleaseTimeout = 3s;

struct Slot {
  pid_t pid = 0;
  int socket = -1;
  std::uint64_t space_base = 0;
  std::array<std::optional<std::uint32_t>, fuzz::kThreads> parked;  // the step that parked
  bool live() const { return pid != 0; }
};

// One answer, placed in the trace by who gave it.
struct Answer {
  int slot;
  int thread;
  std::uint32_t step;
  std::string line;
};

class Coordinator {
 public:
  Coordinator(std::span<const std::uint8_t> script, const RunOptions& options)
      : script_(script), options_(options) {}

  ScriptRun run() {
    ScriptInput in(script_);
    for (std::uint32_t step = 1; !in.done() && step <= kMaxSteps; step++) {
      this->step(in, step);
      if (options_.state_every_step) record_states(step);
    }
    record_states(kMaxSteps + 1);
    for (int s = 0; s < fuzz::kSlots; s++) {
      if (slots_[s].live()) close(kMaxSteps + 1, s);
    }
    return {std::move(lines_), std::move(roles_)};
  }

 private:
  void step(ScriptInput& in, std::uint32_t k) {
    DecodedStep d = decode_step(in, [&](int slot) { return slots_[slot].live(); });
    Slot& slot = slots_[d.slot];
    switch (d.op) {
      case Op::kOpen:
        if (!slot.live()) open(k, d.slot, d.space, d.nonblock);
        return;
      case Op::kClose:
        if (slot.live()) close(k, d.slot);
        return;
      case Op::kShrink:
        return;  // the kernel's shrinker runs on memory pressure only; nothing a caller sees
      case Op::kInterrupt:
        if (slot.live() && slot.parked[d.thread]) interrupt(k, d);
        return;
      default:
        break;
    }
    if (d.ignored || !slot.live()) return;
    if (d.thread >= 0 && slot.parked[d.thread]) return;  // busy in the kernel: the fuzzer skips it
    issue(k, d);
  }

  // The step's bytes, op byte first: the slot decodes them again with its own memory.
  StepMessage message(std::uint32_t k, const DecodedStep& d) const {
    StepMessage out{k,
                    std::vector<std::uint8_t>(script_.begin() + d.start, script_.begin() + d.end)};
    name_target_pid(d, out.bytes);
    return out;
  }

  // kSlotPid + s in a freeze ioctl's pid becomes slot s's pid, while s is open; otherwise it
  // stays a pid no proc has (EINVAL on every driver).
  void name_target_pid(const DecodedStep& d, std::vector<std::uint8_t>& bytes) const {
    if (d.op != Op::kIoctl || (d.ioctl != BINDER_FREEZE && d.ioctl != BINDER_GET_FROZEN_INFO))
      return;
    std::size_t at = d.ioctl_arg - d.start;
    std::uint32_t pid = 0;
    if (at + sizeof pid > bytes.size()) return;
    std::memcpy(&pid, bytes.data() + at, sizeof pid);
    if (pid < kSlotPid || pid - kSlotPid >= fuzz::kSlots) return;
    const Slot& target = slots_[pid - kSlotPid];
    if (!target.live()) return;
    auto real = static_cast<std::uint32_t>(target.pid);
    std::memcpy(bytes.data() + at, &real, sizeof real);
  }

  void issue(std::uint32_t k, const DecodedStep& what) {
    Slot& slot = slots_[what.slot];
    send_step(slot.socket, message(k, what));
    auto answers = collect(k, what.may_park ? options_.settle : kAnswerTimeout);
    bool answered =
        std::any_of(answers.begin(), answers.end(), [&](const Answer& a) { return a.step == k; });
    if (!answered) {
      if (what.thread >= 0) slot.parked[what.thread] = k;
      lines_.push_back(label(k, what.slot, what.thread) + (what.may_park ? "parked" : "no answer"));
    }
    if (what.may_wake && any_parked()) {
      auto more = quiesce();
      answers.insert(answers.end(), more.begin(), more.end());
    }
    record(k, std::move(answers));
  }

  void interrupt(std::uint32_t k, const DecodedStep& what) {
    Slot& slot = slots_[what.slot];
    std::uint32_t parked_at = *slot.parked[what.thread];
    send_step(slot.socket, message(k, what));
    lines_.push_back(label(k, what.slot, what.thread) + "signal");
    // The signalled read must end (EINTR, S1.12); FUSE may take up to 100 ms to pass it on.
    auto answers = collect(parked_at, kAnswerTimeout);
    record(k, std::move(answers));
  }

  void open(std::uint32_t k, int index, std::size_t space, bool nonblock) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0) return;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(pair[0]);
      run_slot(pair[1], {options_.device, space, nonblock});
    }
    ::close(pair[1]);
    Slot& slot = slots_[index];
    slot = Slot{pid, pair[0], 0, {}};
    roles_.pids[pid] = fmt::format("s{}", index);
    auto opened = receive_within(slot.socket, kAnswerTimeout);
    lines_.push_back(label(k, index, -1) + fmt::format("open space {} nonblock {}: {}", space,
                                                       nonblock,
                                                       opened ? opened->line : "no answer"));
    if (!opened || opened->line.rfind("open ret 0", 0) != 0) return close_quietly(slot);
    auto ids = receive_within(slot.socket, kAnswerTimeout);
    if (ids) learn_ids(index, ids->line);
  }

  // "ids T0 T1 T2 T3 base 0x...": the slot's thread ids and where it mapped the device.
  void learn_ids(int index, const std::string& line) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    for (int t = 0; t < fuzz::kThreads; t++) {
      pid_t tid = 0;
      if (in >> tid) roles_.tids[tid] = fmt::format("s{}.t{}", index, t);
    }
    roles_.tids[slots_[index].pid] = fmt::format("s{}.main", index);
    in >> word >> std::hex >> slots_[index].space_base;  // stays 0 when unmapped
  }

  // What the driver's state file shows of every live slot's proc, at the script's end.
  void record_states(std::uint32_t k) {
    if (options_.state_dir.empty()) return;
    std::vector<ProcStateText> procs;
    for (int s = 0; s < fuzz::kSlots; s++) {
      if (!slots_[s].live()) continue;
      auto path =
          std::filesystem::path(options_.state_dir) / "proc" / std::to_string(slots_[s].pid);
      std::ifstream in(path);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      procs.push_back({fmt::format("s{}", s), slots_[s].space_base, std::move(text)});
    }
    for (auto& line : normalise_proc_states(procs, roles_))
      lines_.push_back(fmt::format("{} {}", k, line));
  }

  void close(std::uint32_t k, int index) {
    Slot& slot = slots_[index];
    pid_t pid = slot.pid;
    close_quietly(slot);
    wait_released(pid);
    lines_.push_back(label(k, index, -1) + "killed");
    if (any_parked()) record(k, quiesce());
  }

  void close_quietly(Slot& slot) {
    ::kill(slot.pid, SIGKILL);
    ::waitpid(slot.pid, nullptr, 0);
    ::close(slot.socket);
    slot = Slot{};
  }

  // The driver's release of a dead proc is deferred (the kernel's binder_deferred_release runs
  // on a workqueue); what it sends other procs must be in before the next step.
  void wait_released(pid_t pid) {
    if (!options_.state_dir.empty()) {
      auto entry = std::filesystem::path(options_.state_dir) / "proc" / std::to_string(pid);
      for (auto until = Clock::now() + kReleaseTimeout; Clock::now() < until;) {
        std::error_code ec;
        if (!std::filesystem::exists(entry, ec)) break;
        std::this_thread::sleep_for(1ms);
      }
    }
    std::this_thread::sleep_for(options_.settle);
  }

  bool any_parked() const {
    return std::any_of(slots_.begin(), slots_.end(), [](const Slot& s) {
      return std::any_of(s.parked.begin(), s.parked.end(),
                         [](const auto& p) { return p.has_value(); });
    });
  }

  std::optional<ResultMessage> receive_within(int socket, std::chrono::milliseconds timeout) {
    pollfd p{socket, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    return receive_result(socket);
  }

  // Answers from every slot until the one for `step` is in or `timeout` passes.
  std::vector<Answer> collect(std::uint32_t step, std::chrono::milliseconds timeout) {
    std::vector<Answer> answers;
    auto until = Clock::now() + timeout;
    while (Clock::now() < until) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (!wait_answers(answers, std::max(left, 1ms))) break;
      if (std::any_of(answers.begin(), answers.end(),
                      [&](const Answer& a) { return a.step == step; }))
        break;
    }
    return answers;
  }

  // Answers until `settle` passes with none: what parked readers were given.
  std::vector<Answer> quiesce() {
    std::vector<Answer> answers;
    while (wait_answers(answers, options_.settle)) {
    }
    return answers;
  }

  // Waits up to `timeout` for answers from any slot; false when none came.
  bool wait_answers(std::vector<Answer>& answers, std::chrono::milliseconds timeout) {
    std::vector<pollfd> fds;
    std::vector<int> index;
    for (int s = 0; s < fuzz::kSlots; s++) {
      if (slots_[s].live()) {
        fds.push_back({slots_[s].socket, POLLIN, 0});
        index.push_back(s);
      }
    }
    if (fds.empty() || ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0)
      return false;
    bool any = false;
    for (std::size_t i = 0; i < fds.size(); i++) {
      if (!(fds[i].revents & POLLIN)) continue;
      auto message = receive_result(fds[i].fd);
      if (!message) continue;
      Slot& slot = slots_[index[i]];
      for (auto& parked : slot.parked) {
        if (parked == message->step) parked.reset();
      }
      answers.push_back({index[i], message->thread, message->step, std::move(message->line)});
      any = true;
    }
    return any;
  }

  // The step's own answer first, then what it woke, in slot and thread order: the order two
  // threads' answers reach the coordinator is the scheduler's, not the driver's.
  void record(std::uint32_t k, std::vector<Answer> answers) {
    std::stable_sort(answers.begin(), answers.end(), [&](const Answer& a, const Answer& b) {
      return std::tuple(a.step != k, a.slot, a.thread) < std::tuple(b.step != k, b.slot, b.thread);
    });
    for (const Answer& a : answers) {
      std::string who = label(k, a.slot, a.thread);
      if (a.step != k) who += fmt::format("(call of step {}) ", a.step);
      lines_.push_back(who + with_roles(a.line));
    }
  }

  static std::string label(std::uint32_t k, int slot, int thread) {
    return thread < 0 ? fmt::format("{} s{}: ", k, slot)
                      : fmt::format("{} s{}.t{}: ", k, slot, thread);
  }

  // pid=1234 -> pid=s2: process ids are the OS's, roles are the script's.
  std::string with_roles(const std::string& line) const {
    static const std::regex pid(R"(pid=(\d+))");
    std::string out;
    auto last = line.cbegin();
    for (std::sregex_iterator it(line.begin(), line.end(), pid), end; it != end; ++it) {
      out.append(last, (*it)[0].first);
      int id = std::stoi((*it)[1].str());
      auto role = roles_.pids.find(id);
      out += id == 0                     ? std::string("pid=0")
             : role == roles_.pids.end() ? std::string("pid=other")
                                         : "pid=" + role->second;
      last = (*it)[0].second;
    }
    out.append(last, line.cend());
    return out;
  }

  const std::span<const std::uint8_t> script_;
  const RunOptions& options_;
  std::array<Slot, fuzz::kSlots> slots_;
  Roles roles_;
  std::vector<std::string> lines_;
};

}  // namespace

ScriptRun run_script(std::span<const std::uint8_t> script, const RunOptions& options) {
  return Coordinator(script, options).run();
}

std::vector<std::string> run_script_on_device(std::span<const std::uint8_t> script,
                                              const RunOptions& options) {
  return run_script(script, options).trace;
}

}  // namespace cused::diff

// SPDX-License-Identifier: GPL-2.0-only
// binder-diff (issue 19): the in-process fuzzer's scripts (tests/fuzz/script.h) run on real
// binder devices, answer by answer, so that cused's answers can be compared with the kernel's.
//
//   binder-diff generate --seed N --count K --out DIR     random scripts (tests/diff/generator.h)
//   binder-diff run --dev PATH SCRIPT...                  print each script's trace
//   binder-diff record --dev /dev/binder --corpus DIR     store the kernel's trace beside each
//                      [--events /sys/kernel/tracing]     script (run twice: kept if the same),
//                                                         and its binder events with --events
//   binder-diff compare --dev PATH --path fuse|run --corpus DIR
//                       [--events-control MNT/binder-control]
//                                                         replay, compare with the stored traces
//                                                         (and cused's events with the kernel's)
//   binder-diff campaign --kernel /dev/binder --dev PATH --path fuse --seed N --minutes M
//                        [--save DIR] [--kernel-events TRACEFS --events-control CONTROL]
//                                                         random scripts on both, side by side;
//                                                         what diverges is minimised and saved
//   binder-diff minimise --kernel /dev/binder --dev PATH SCRIPT --save DIR
//
// Docs: docs/reliability.md, "Differential testing" and its "Trace events".
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "core/stats.h"
#include "core/version.h"
#include "tests/diff/compare.h"
#include "tests/diff/coordinator.h"
#include "tests/diff/deviations.h"
#include "tests/diff/event_compare.h"
#include "tests/diff/event_lines.h"
#include "tests/diff/event_source.h"
#include "tests/diff/generator.h"
#include "tests/diff/late_answer.h"
#include "tests/diff/step_decoder.h"
#include "tests/diff/trace_line.h"
#include "tests/fuzz/script_input.h"

namespace {

namespace fs = std::filesystem;
using cused::diff::compare;
using cused::diff::RunOptions;
using cused::diff::Trace;
using cused::diff::Verdict;

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

Trace read_trace(const fs::path& path) {
  Trace lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string joined(const Trace& trace) {
  std::string out;
  for (const auto& line : trace) out += line + "\n";
  return out;
}

std::vector<fs::path> scripts_in(const fs::path& dir) {
  std::vector<fs::path> scripts;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".script") scripts.push_back(entry.path());
  }
  std::sort(scripts.begin(), scripts.end());
  return scripts;
}

fs::path kernel_trace_of(const fs::path& script) {
  return fs::path(script).replace_extension(".kernel.trace");
}

fs::path kernel_events_of(const fs::path& script) {
  return fs::path(script).replace_extension(".kernel.events");
}

// A run of the script, with the driver's binder events recorded around it and normalised when
// `events` is given.
struct EventRun {
  cused::diff::ScriptRun run;
  std::vector<std::string> raw, events;
};

EventRun run_traced_if(const std::vector<std::uint8_t>& bytes, const RunOptions& options,
                       cused::diff::EventSource* events) {
  if (!events) return {cused::diff::run_script(bytes, options), {}, {}};
  events->start();
  EventRun out{cused::diff::run_script(bytes, options), {}, {}};
  out.raw = events->stop();
  out.events = cused::diff::normalise_events(out.raw, out.run.roles);
  return out;
}

void print_divergence(const std::string& name, const Verdict& v) {
  fmt::print("DIVERGED {} at line {}:\n  kernel: {}\n  cused:  {}\n", name, v.line, v.kernel,
             v.cused);
}

void print_documented(const std::string& name, const Verdict& v) {
  for (const auto& d : v.documented)
    fmt::print("documented {} at line {} ({}):\n  kernel: {}\n  cused:  {}\n", name, d.line,
               d.deviation, d.kernel, d.cused);
  if (v.not_compared || v.cused_not_compared)
    fmt::print(
        "{}: not compared (the documented deviation's effect goes on in their slots): {} "
        "kernel lines, {} cused lines\n",
        name, v.not_compared, v.cused_not_compared);
}

struct Tally {
  std::size_t scripts = 0, lines = 0, not_compared = 0, cused_not_compared = 0, same = 0,
              diverged = 0;
  std::size_t timing_shown = 0;        // diverged, the same slower, the difference a late answer
  std::size_t timing_dependent = 0;    // diverged, the same slower, not shown to be timing
  std::size_t unstable = 0;            // campaign: the kernel's runs differ before the divergence
  std::size_t unstable_unmatched = 0;  // of those, cused matches neither kernel run
  std::map<std::string, std::size_t> documented;  // scripts with the deviation
  std::size_t documented_scripts = 0;

  void add(const Verdict& v) {
    scripts++;
    lines += v.compared;
    not_compared += v.not_compared;
    cused_not_compared += v.cused_not_compared;
    if (v.kind == Verdict::kSame) same++;
    if (v.kind == Verdict::kDiverged) diverged++;
    if (v.kind == Verdict::kDocumented) documented_scripts++;
    std::set<std::string> names;
    for (const auto& d : v.documented) names.insert(d.deviation);
    for (const auto& name : names) documented[name]++;
  }
  bool failed() const { return diverged || timing_dependent || unstable_unmatched; }
  // A judged script: its verdict, and how the slower rerun classed it.
  void add(const Verdict& v, bool timing_shown_slower, bool timing_dependent_divergence) {
    add(v);
    timing_shown += timing_shown_slower;
    if (timing_dependent_divergence) diverged--, timing_dependent++;
  }
  void print(const std::string& what) const {
    fmt::print(
        "{}: {} scripts, {} trace lines compared, not compared {} kernel and {} cused lines: {} "
        "the same, {} diverged",
        what, scripts, lines, not_compared, cused_not_compared, same, diverged);
    for (const auto& [name, count] : documented) fmt::print(", {} documented ({})", count, name);
    fmt::print("\n");
    fmt::print(
        "{}: {} diverged, {} documented, {} diverged timing-dependent, {} unstable ({} where cused "
        "matches neither kernel run); {} the same only at the slower settle time, shown to be "
        "timing\n",
        what, diverged, documented_scripts, timing_dependent, unstable, unstable_unmatched,
        timing_shown);
  }
};

// How many scripts use a BC_ command (S0.3): sent it, had it consumed by the driver (its bytes
// within write_consumed: a command after a failing one is not read), and had it consumed in a
// call that returned 0 with extended error BR_OK (nothing in the call failed).
struct CommandUse {
  std::size_t sent = 0, consumed = 0, succeeded = 0;
};

std::map<std::string, CommandUse> command_use(const Trace& trace) {
  std::map<std::string, std::array<bool, 3>> in_script;
  for (const auto& text : trace) {
    auto line = cused::diff::parse_trace_line(text);
    std::size_t consumed = line.commands_consumed();
    bool ok = line.ret == "0" && line.failed_with("BR_OK", "0");
    for (std::size_t i = 0; i < line.sent.size(); i++) {
      auto& use = in_script[line.sent[i].name];
      use[0] = true;
      use[1] = use[1] || i < consumed;
      use[2] = use[2] || (i < consumed && ok);
    }
  }
  std::map<std::string, CommandUse> out;
  for (const auto& [name, use] : in_script) out[name] = {use[0], use[1], use[2]};
  return out;
}

// Which ioctls of S0.1 and which BC_ commands the corpus's kernel traces exercise.
int coverage(const fs::path& corpus) {
  // The three the slots issue by name, then every other one as the trace shows it, by number.
  std::vector<std::string> ioctls = {"write_read", "context_mgr", "thread_exit"};
  std::vector<unsigned> others(cused::fuzz::kIoctls.begin(), cused::fuzz::kIoctls.end());
  std::sort(others.begin(), others.end(),
            [](unsigned a, unsigned b) { return _IOC_NR(a) < _IOC_NR(b); });
  for (unsigned cmd : others) ioctls.push_back(fmt::format("ioctl {:#x}", cmd));
  std::map<std::string, std::size_t> seen;
  std::map<std::string, CommandUse> commands;
  std::size_t scripts = 0;
  for (const auto& script : scripts_in(corpus)) {
    if (!fs::exists(kernel_trace_of(script))) continue;
    scripts++;
    Trace trace = read_trace(kernel_trace_of(script));
    std::string text = joined(trace);
    for (const auto& name : ioctls) seen[name] += text.find(": " + name) != std::string::npos;
    for (const auto& [name, use] : command_use(trace)) {
      commands[name].sent += use.sent;
      commands[name].consumed += use.consumed;
      commands[name].succeeded += use.succeeded;
    }
  }
  std::size_t ioctls_missing = 0, not_consumed = 0, never_succeeded = 0;
  fmt::print("{} scripts with kernel traces; ioctls (S0.1), scripts that issue each:\n", scripts);
  for (const auto& name : ioctls) {
    fmt::print("  {:<34} {}\n", name, seen[name]);
    ioctls_missing += seen[name] == 0;
  }
  fmt::print(
      "BC_ commands (S0.3), scripts that: sent it / had it consumed / had it consumed in a "
      "call that returned 0 with BR_OK:\n");
  for (std::string_view name : cused::core::command_names()) {
    const CommandUse& use = commands[std::string(name)];
    fmt::print("  {:<34} {:>4} {:>4} {:>4}\n", name, use.sent, use.consumed, use.succeeded);
    not_consumed += use.consumed == 0;
    never_succeeded += use.succeeded == 0;
  }
  fmt::print(
      "{} ioctls not issued; {} BC_ commands never consumed, {} never consumed in a call "
      "that succeeded\n",
      ioctls_missing, not_consumed, never_succeeded);
  return 0;
}

// The index of the first line in which two runs' traces differ (a.size() if none).
std::size_t first_difference(const Trace& a, const Trace& b) {
  auto [in_a, in_b] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<std::size_t>(in_a - a.begin());
}

std::string line_or_end(const Trace& trace, std::size_t at) {
  return at < trace.size() ? trace[at] : "(end of trace)";
}

int generate(std::uint64_t seed, int count, int actions, const fs::path& out) {
  fs::create_directories(out);
  for (int i = 0; i < count; i++) {
    auto script = cused::diff::generate_script(seed + i, actions);
    write_file(out / fmt::format("gen-{}.script", seed + i),
               std::string(script.begin(), script.end()));
  }
  fmt::print("{} scripts written to {}\n", count, out.string());
  return 0;
}

int run(const RunOptions& options, const std::vector<std::string>& scripts) {
  for (const auto& script : scripts) {
    fmt::print("== {}\n{}", script, joined(run_script_on_device(read_bytes(script), options)));
  }
  return 0;
}

// The kernel's answers (and, with `events`, its binder events) to `bytes`, twice: nullopt when
// the two runs differ (printed), else the first.
std::optional<EventRun> record_twice(const fs::path& script, const RunOptions& options,
                                     cused::diff::EventSource* events) {
  auto bytes = read_bytes(script);
  EventRun first = run_traced_if(bytes, options, events);
  EventRun second = run_traced_if(bytes, options, events);
  const Trace &a = first.run.trace, &b = second.run.trace;
  if (a != b) {
    std::size_t at = first_difference(a, b);
    fmt::print("not deterministic: {} (line {}: '{}' then '{}')\n", script.filename().string(),
               at + 1, line_or_end(a, at), line_or_end(b, at));
    return std::nullopt;
  }
  if (!events) return first;
  auto moved = cused::diff::compare_events(first.events, second.events);
  if (moved.diverged || !moved.documented.empty()) {
    // Its answers are the same, its events are not: the trace is kept, the events are not.
    if (moved.diverged)
      fmt::print("events not deterministic: {} ({} event {}: '{}' then '{}')\n",
                 script.filename().string(), moved.task, moved.event, moved.kernel, moved.cused);
    else
      fmt::print("events not deterministic: {} (the second run differs as {})\n",
                 script.filename().string(), moved.documented.front());
    first.events.clear();
  }
  return first;
}

int record(const RunOptions& options, const fs::path& corpus, bool drop, const std::string& tracefs,
           const fs::path& raw_dir) {
  std::unique_ptr<cused::diff::EventSource> events;
  if (!tracefs.empty()) events = std::make_unique<cused::diff::TracefsEvents>(tracefs);
  std::size_t kept = 0, unstable = 0, with_events = 0, event_lines = 0;
  for (const auto& script : scripts_in(corpus)) {
    auto recorded = record_twice(script, options, events.get());
    if (!recorded) {
      unstable++;
      if (drop) fs::remove(script), fs::remove(kernel_trace_of(script));
      continue;
    }
    write_file(kernel_trace_of(script), joined(recorded->run.trace));
    kept++;
    if (!events || recorded->events.empty()) continue;
    write_file(kernel_events_of(script), joined(recorded->events));
    if (!raw_dir.empty())
      write_file(raw_dir / (script.stem().string() + ".raw.events"), joined(recorded->raw));
    with_events++;
    event_lines += recorded->events.size();
    fmt::print("{}: {} events\n", script.filename().string(), recorded->events.size());
  }
  fmt::print("recorded {} kernel traces; {} scripts not deterministic{}\n", kept, unstable,
             drop ? " (removed)" : "");
  if (events)
    fmt::print("recorded the kernel's events of {} scripts, {} events\n", with_events, event_lines);
  return 0;
}

// The settle time a divergence is confirmed at: a loaded machine can keep an answer past
// --settle-ms, which then reads as a parked call or a late wakeup; a real divergence stays.
RunOptions patient(RunOptions options) {
  options.settle *= 10;
  return options;
}

// cused's trace of `bytes` against the kernel's. A divergence is run again at the patient
// settle time; the first run's divergence is printed either way, and a slower run that matches
// counts as timing only when the first difference was a late answer (late_answer.h), else as
// "diverged, timing-dependent". With `events`, the first run is traced: its binder events are
// kept while that run is the one judged.
struct Judged {
  Verdict verdict;
  Trace cused;
  bool needed_patience = false;                    // diverged at --settle-ms, the same when slower
  bool timing_shown = false;                       // and the first difference a late answer
  std::optional<std::vector<std::string>> events;  // of the run judged, if it was traced
};

Judged judge(const std::string& name, const Trace& kernel, const std::vector<std::uint8_t>& bytes,
             const RunOptions& options, const std::string& path,
             cused::diff::EventSource* events = nullptr) {
  Judged judged;
  EventRun first = run_traced_if(bytes, options, events);
  judged.cused = std::move(first.run.trace);
  if (events) judged.events = std::move(first.events);
  judged.verdict = compare(kernel, judged.cused, path);
  if (judged.verdict.kind != Verdict::kDiverged) return judged;
  const Verdict& v = judged.verdict;
  Trace slower = run_script_on_device(bytes, patient(options));
  Verdict again = compare(kernel, slower, path);
  if (again.kind == Verdict::kDiverged) return judged;
  bool shown = cused::diff::late_answer(kernel, judged.cused, v);
  fmt::print(
      "{}: diverged at {} ms a step, the same at {} ms: {}\n  first run, kernel line {}: {}\n"
      "  first run, cused line {}: {}\n",
      name, options.settle.count(), patient(options).settle.count(),
      shown ? "timing (the first difference is a late answer)"
            : "DIVERGED, TIMING-DEPENDENT (the first difference is not a late answer)",
      v.line, v.kernel, v.cused_line, v.cused);
  if (!shown) {
    judged.needed_patience = true;
    return judged;  // the first run's divergence stands
  }
  return {again, std::move(slower), true, true, std::nullopt};
}

// The event comparison's count over a corpus or a campaign (docs/reliability.md, "Trace events").
struct EventTally {
  std::size_t scripts = 0, events = 0, not_compared = 0, diverged = 0;
  std::size_t skipped_documented = 0;  // answers differ as documented: events not compared
  std::size_t skipped_diverged = 0;    // answers diverged (counted by the answers' tally)
  std::size_t skipped_moved = 0;       // the traced run's answers were not the kernel's
  std::size_t kernel_unstable = 0;     // campaign: the kernel's own two runs' events differ
  std::map<std::string, std::size_t> documented;  // events the deviation explained

  void add(const cused::diff::EventVerdict& v) {
    scripts++;
    events += v.compared;
    not_compared += v.not_compared;
    diverged += v.diverged;
    for (const auto& d : v.documented) documented[d.substr(0, d.find(':'))]++;
  }
  void print(const std::string& what) const {
    fmt::print(
        "{}: events of {} scripts compared, {} kernel events compared, {} of no script task "
        "not compared, {} diverged; {} scripts not compared (answers documented as different), "
        "{} (answers moved in the traced run), {} (answers diverged)",
        what, scripts, events, not_compared, diverged, skipped_documented, skipped_moved,
        skipped_diverged);
    for (const auto& [name, count] : documented) fmt::print(", {} documented ({})", count, name);
    if (kernel_unstable)
      fmt::print(", {} scripts whose events the kernel gave differently twice", kernel_unstable);
    fmt::print("\n");
  }
};

// The judged run's events, if they can be compared with the kernel's: its answers were the
// kernel's (where they differ as documented, or were judged in an untraced run, the events are
// not comparable).
const std::vector<std::string>* comparable_events(const std::string& name, const Judged& judged,
                                                  EventTally& tally) {
  if (judged.verdict.kind != Verdict::kSame) {
    (judged.verdict.kind == Verdict::kDocumented ? tally.skipped_documented
                                                 : tally.skipped_diverged)++;
    return nullptr;
  }
  if (!judged.events) {
    fmt::print("{}: events not compared, the traced run answered otherwise\n", name);
    tally.skipped_moved++;
    return nullptr;
  }
  return &*judged.events;
}

void count_events(const std::string& name, const cused::diff::EventVerdict& v, EventTally& tally) {
  tally.add(v);
  for (const auto& d : v.documented) fmt::print("{}: documented event difference {}\n", name, d);
  if (v.diverged)
    fmt::print("EVENTS DIVERGED {} in {} at its event {}:\n  kernel: {}\n  cused:  {}\n", name,
               v.task, v.event, v.kernel, v.cused);
}

void compare_script_events(const std::string& name, const Judged& judged,
                           const std::vector<std::string>& kernel_events, EventTally& tally) {
  if (auto cused = comparable_events(name, judged, tally))
    count_events(name, cused::diff::compare_events(kernel_events, *cused), tally);
}

// `compare --shard I/N`: the I-th of N interleaved parts of a corpus (0 <= I < N), so that N
// runs (one per allocator design, tests/designs/run) cover it once between them.
struct Shard {
  unsigned index = 0;
  unsigned count = 1;
  bool takes(unsigned position) const { return position % count == index; }
  std::string label() const {
    return count == 1 ? std::string() : fmt::format(", shard {}/{}", index, count);
  }
};

std::optional<Shard> parse_shard(const std::string& text) {
  Shard shard;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> shard.index >> slash >> shard.count) || slash != '/' || !in.eof() ||
      shard.count == 0 || shard.index >= shard.count)
    return std::nullopt;
  return shard;
}

int compare_corpus(const RunOptions& options, const fs::path& corpus, const std::string& path,
                   cused::diff::EventSource* cused_events, Shard shard) {
  Tally tally;
  EventTally event_tally;
  unsigned position = 0;
  for (const auto& script : scripts_in(corpus)) {
    if (!fs::exists(kernel_trace_of(script))) continue;
    if (!shard.takes(position++)) continue;
    Trace kernel = read_trace(kernel_trace_of(script));
    bool with_events = cused_events && fs::exists(kernel_events_of(script));
    std::string name = script.filename().string();
    Judged judged = judge(name, kernel, read_bytes(script), options, path,
                          with_events ? cused_events : nullptr);
    const Verdict& v = judged.verdict;
    bool timing_dependent = v.kind == Verdict::kDiverged && judged.needed_patience;
    tally.add(v, judged.timing_shown, timing_dependent);
    print_documented(name, v);
    if (v.kind == Verdict::kDiverged) print_divergence(name, v);
    if (with_events)
      compare_script_events(name, judged, read_trace(kernel_events_of(script)), event_tally);
  }
  tally.print(fmt::format("compare on {} ({}{})", options.device, path, shard.label()));
  if (cused_events)
    event_tally.print(fmt::format("events on {} ({}{})", options.device, path, shard.label()));
  return tally.failed() || event_tally.diverged ? 1 : 0;
}

// True when cused's answers part from the kernel's in a way no documented deviation explains,
// and the kernel answers the script the same way twice (else it is not comparable).
bool diverges(const std::vector<std::uint8_t>& bytes, const RunOptions& kernel_options,
              const RunOptions& options, const std::string& path) {
  Trace kernel = run_script_on_device(bytes, kernel_options);
  return judge("minimising", kernel, bytes, options, path).verdict.kind == Verdict::kDiverged &&
         run_script_on_device(bytes, kernel_options) == kernel;
}

// Drops runs of steps, halving the run length when none can go, while the script still
// diverges: the smallest script this finds in `budget`.
std::vector<std::uint8_t> minimise(std::vector<std::uint8_t> script,
                                   const RunOptions& kernel_options, const RunOptions& options,
                                   const std::string& path, std::chrono::seconds budget) {
  auto until = std::chrono::steady_clock::now() + budget;
  auto spans = cused::diff::step_spans(script);
  for (std::size_t chunk = std::max<std::size_t>(spans.size() / 2, 1);
       chunk >= 1 && std::chrono::steady_clock::now() < until;) {
    bool removed = false;
    for (std::size_t i = 0;
         i + chunk <= spans.size() && std::chrono::steady_clock::now() < until;) {
      std::vector<std::uint8_t> candidate(script.begin(), script.begin() + spans[i].first);
      candidate.insert(candidate.end(), script.begin() + spans[i + chunk - 1].second, script.end());
      if (diverges(candidate, kernel_options, options, path)) {
        script = std::move(candidate);
        spans = cused::diff::step_spans(script);
        removed = true;
      } else {
        i += chunk;
      }
    }
    if (!removed) chunk /= 2;
  }
  fmt::print("minimised to {} steps, {} bytes\n", spans.size(), script.size());
  return script;
}

void save_divergence(const fs::path& dir, const std::string& name,
                     const std::vector<std::uint8_t>& bytes, const RunOptions& kernel_options,
                     const RunOptions& options) {
  fs::create_directories(dir);
  auto script = dir / (name + ".script");
  write_file(script, std::string(bytes.begin(), bytes.end()));
  write_file(kernel_trace_of(script), joined(run_script_on_device(bytes, kernel_options)));
  write_file(fs::path(script).replace_extension(".cused.trace"),
             joined(run_script_on_device(bytes, options)));
  fmt::print("saved {}\n", script.string());
}

// Whether a diverged script's answers move between runs of one driver before the divergence:
// each side run once more (cused at the settle time of its judged run), up to its own line.
struct Stability {
  bool kernel_unstable = false, cused_unstable = false;
  std::size_t kernel_line = 0, cused_line = 0;  // the first line the runs differ in, from 1
  Trace kernel_again;                           // the kernel's second run
};

Stability stability(const Trace& kernel, const Judged& judged,
                    const std::vector<std::uint8_t>& bytes, const RunOptions& kernel_options,
                    const RunOptions& options) {
  Stability out;
  out.kernel_again = run_script_on_device(bytes, kernel_options);
  std::size_t k = first_difference(kernel, out.kernel_again);
  std::size_t c = first_difference(judged.cused, run_script_on_device(bytes, options));
  out.kernel_line = k + 1, out.cused_line = c + 1;
  out.kernel_unstable = k < kernel.size() && k < judged.verdict.line;
  out.cused_unstable = c < judged.cused.size() && c < judged.verdict.cused_line;
  return out;
}

// Saves a script with the traces it was judged by (NAME.script, NAME.<what>.trace), so that a
// timing-dependent or unstable script can be looked at after the campaign.
void save_traces(const fs::path& dir, const std::string& name,
                 const std::vector<std::uint8_t>& bytes,
                 const std::vector<std::pair<std::string, const Trace*>>& traces) {
  fs::create_directories(dir);
  write_file(dir / (name + ".script"), std::string(bytes.begin(), bytes.end()));
  for (const auto& [what, trace] : traces)
    write_file(dir / fmt::format("{}.{}.trace", name, what), joined(*trace));
  fmt::print("saved {}\n", (dir / (name + ".script")).string());
}

// A campaign's binder events on both drivers (docs/reliability.md, "Trace events"): the
// kernel's tracefs and cused's binder-control, or none.
struct CampaignEvents {
  cused::diff::EventSource* kernel = nullptr;
  cused::diff::EventSource* cused = nullptr;
};

// A campaign script's events: a difference counts when the kernel gives its own events the same
// way in a second run, else the script's events are the kernel's timing and not compared.
void compare_campaign_events(const std::string& name, const std::vector<std::uint8_t>& bytes,
                             const std::vector<std::string>& kernel_events, const Judged& judged,
                             const RunOptions& kernel_options, cused::diff::EventSource& kernel,
                             EventTally& tally) {
  auto cused = comparable_events(name, judged, tally);
  if (!cused) return;
  auto v = cused::diff::compare_events(kernel_events, *cused);
  if (v.diverged) {
    auto again_events = run_traced_if(bytes, kernel_options, &kernel).events;
    auto again = cused::diff::compare_events(kernel_events, again_events);
    if (again.diverged || !again.documented.empty()) {
      // The kernel gives its own events differently: cused's count as matching when they match
      // the kernel's other run, and diverge when they match neither.
      auto other = cused::diff::compare_events(again_events, *cused);
      fmt::print(
          "{}: events unstable on the kernel's side (its runs part in {} at event {}: '{}' then "
          "'{}'); cused's {}\n",
          name, again.task, again.event, again.kernel, again.cused,
          other.diverged ? "match neither run: a divergence" : "match the kernel's other run");
      tally.kernel_unstable++;
      if (!other.diverged) return;
    }
  }
  count_events(name, v, tally);
}

int campaign(const RunOptions& kernel_options, const RunOptions& options, const std::string& path,
             std::uint64_t seed, double minutes, int actions, const fs::path& save,
             int minimise_seconds, CampaignEvents events) {
  fmt::print("campaign: seed {} ({} minutes; binder-diff campaign --seed {} replays it)\n", seed,
             minutes, seed);
  Tally tally;
  EventTally event_tally;
  auto until = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long>(minutes * 60000));
  for (std::uint64_t s = seed; std::chrono::steady_clock::now() < until; s++) {
    auto bytes = cused::diff::generate_script(s, actions);
    std::string name = fmt::format("seed {}", s);
    EventRun kernel_run = run_traced_if(bytes, kernel_options, events.kernel);
    const Trace& kernel = kernel_run.run.trace;
    Judged judged =
        judge(name, kernel, bytes, options, path, events.kernel ? events.cused : nullptr);
    const Verdict& v = judged.verdict;
    bool timing_dependent = v.kind == Verdict::kDiverged && judged.needed_patience;
    if (v.kind == Verdict::kDiverged) {
      Stability stable = stability(kernel, judged, bytes, kernel_options, options);
      if (stable.kernel_unstable) {
        // The kernel answered the script differently by the diverging line: cused's answers
        // count when they match the kernel's other run, and fail the campaign when they match
        // neither. Named, saved and printed with the lines where the kernel's runs part.
        std::size_t at = stable.kernel_line - 1;
        Verdict other = compare(stable.kernel_again, judged.cused, path);
        bool unmatched = other.kind == Verdict::kDiverged;
        fmt::print(
            "UNSTABLE {}: the kernel's runs part at line {}:\n  first:  {}\n  second: {}\n  "
            "cused diverged from the first at line {}; {}\n",
            name, stable.kernel_line, line_or_end(kernel, at), line_or_end(stable.kernel_again, at),
            v.line,
            unmatched ? fmt::format("and from the second at line {}: matches neither, a failure",
                                    other.line)
                      : "matches the second");
        tally.unstable++;
        tally.unstable_unmatched += unmatched;
        if (!save.empty())
          save_traces(save, fmt::format("unstable-{}", s), bytes,
                      {{"kernel", &kernel},
                       {"kernel-again", &stable.kernel_again},
                       {"cused", &judged.cused}});
        continue;
      }
      if (stable.cused_unstable)
        fmt::print(
            "unstable on cused's side only: seed {} (cused's runs part at line {}): a "
            "failure\n",
            s, stable.cused_line);
    }
    tally.add(v, judged.timing_shown, timing_dependent);
    print_documented(name, v);
    if (events.kernel && events.cused)
      compare_campaign_events(name, bytes, kernel_run.events, judged, kernel_options,
                              *events.kernel, event_tally);
    if (timing_dependent) {
      print_divergence(name + " (timing-dependent)", v);
      if (!save.empty())
        save_traces(save, fmt::format("timing-{}", s), bytes,
                    {{"kernel", &kernel}, {"cused", &judged.cused}});
    } else if (v.kind == Verdict::kDiverged) {
      print_divergence(name, v);
      if (!save.empty() && minimise_seconds > 0) {
        auto small =
            minimise(bytes, kernel_options, options, path, std::chrono::seconds(minimise_seconds));
        save_divergence(save, fmt::format("diverged-{}", s), small, kernel_options, options);
      } else if (!save.empty()) {
        save_traces(save, fmt::format("diverged-{}", s), bytes,
                    {{"kernel", &kernel}, {"cused", &judged.cused}});
      }
    }
    if (tally.scripts % 20 == 0) tally.print("campaign so far");
  }
  tally.print("campaign");
  if (events.kernel && events.cused) event_tally.print("campaign events");
  return tally.failed() || event_tally.diverged ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The slots' calls carry their thread's nice into the state lines ("pri N", S4.12), and the
  // kernel's traces were recorded at nice 0: a run under `nice` (a loaded machine's test run)
  // must not read as a divergence. Before any thread or slot exists, so all inherit it.
  setpriority(PRIO_PROCESS, 0, 0);
  CLI::App app{
      "binder-diff: fuzz scripts on real binder devices, the kernel's answers against cused's"};
  app.set_version_flag("--version", cused::version_text("binder-diff", nullptr));
  app.require_subcommand(1);
  RunOptions options;
  int settle_ms = 30;
  auto device_options = [&](CLI::App* sub) {
    sub->add_option("--dev", options.device, "the binder device")->required();
    sub->add_option("--settle-ms", settle_ms, "ms before a call counts as parked (default 30)");
    sub->add_option("--state", options.state_dir,
                    "the driver's state dir (binder_logs, debugfs binder): waits for releases");
  };

  std::uint64_t seed = 1;
  int count = 10, actions = 40;
  fs::path out, corpus, save, raw_dir;
  std::string tracefs, events_control;
  std::string events_file =
      (fs::temp_directory_path() / fmt::format("binder-diff-events-{}.trace", ::getpid())).string();
  std::vector<std::string> scripts;
  std::string path = "fuse";
  bool drop = false;
  double minutes = 1;
  int minimise_seconds = 120;
  RunOptions kernel_options;

  // The kernel's device beside cused's, for the commands that run both.
  auto kernel_side = [&](CLI::App* sub) {
    sub->add_option("--kernel", kernel_options.device, "the kernel's device")->required();
    sub->add_option("--kernel-state", kernel_options.state_dir, "the kernel's debugfs binder dir");
    sub->add_option("--path", path, "which cused path --dev is: fuse or run");
  };

  auto* gen = app.add_subcommand("generate", "write random scripts");
  gen->add_option("--seed", seed);
  gen->add_option("--count", count);
  gen->add_option("--actions", actions, "random actions per script (default 40)");
  gen->add_option("--out", out)->required();

  auto* run_cmd = app.add_subcommand("run", "print the traces of scripts on a device");
  device_options(run_cmd);
  run_cmd->add_option("scripts", scripts)->required();
  run_cmd->add_flag("--state-every-step", options.state_every_step,
                    "the procs' state after every step, not only at the end");

  auto* rec = app.add_subcommand("record", "store the kernel's trace beside each script");
  device_options(rec);
  rec->add_option("--corpus", corpus)->required();
  rec->add_flag("--drop-unstable", drop, "remove scripts whose two runs differ");
  rec->add_option("--events", tracefs,
                  "tracefs (/sys/kernel/tracing): store the kernel's binder events beside each "
                  "script too (NAME.kernel.events)");
  rec->add_option("--raw-events", raw_dir, "where the events go as tracefs printed them");

  auto* cmp = app.add_subcommand("compare", "replay a corpus against its stored kernel traces");
  device_options(cmp);
  cmp->add_option("--corpus", corpus)->required();
  cmp->add_option("--path", path, "which cused path --dev is: fuse or run (deviations differ)");
  cmp->add_option("--events-control", events_control,
                  "cused's binder-control: compare its binder events with the stored "
                  "NAME.kernel.events too");
  cmp->add_option("--events-file", events_file, "where cused writes them (absolute)");
  std::string shard_text = "0/1";
  cmp->add_option("--shard", shard_text,
                  "I/N: only every N-th script, from the I-th (0-based); default 0/1, the whole "
                  "corpus")
      ->envname("CUSED_DIFF_SHARD");

  auto* camp = app.add_subcommand("campaign", "random scripts on the kernel and on cused");
  device_options(camp);
  kernel_side(camp);
  camp->add_option("--seed", seed);
  camp->add_option("--minutes", minutes);
  camp->add_option("--actions", actions);
  camp->add_option("--save", save,
                   "where diverging, timing-dependent and unstable scripts and their traces go");
  camp->add_option("--minimise-seconds", minimise_seconds,
                   "time to shrink each diverging script before it is saved (default 120; 0 "
                   "saves it whole)");
  camp->add_option("--kernel-events", tracefs,
                   "tracefs (/sys/kernel/tracing): with --events-control, compare the binder "
                   "events of both drivers too");
  camp->add_option("--events-control", events_control, "cused's binder-control");
  camp->add_option("--events-file", events_file, "where cused writes its events (absolute)");

  auto* min = app.add_subcommand("minimise", "shrink a diverging script to fewer steps");
  device_options(min);
  kernel_side(min);
  min->add_option("--minutes", minutes, "time budget");
  min->add_option("script", scripts)->required()->expected(1);
  min->add_option("--save", save, "where the smallest script and both traces go")->required();

  auto* cov = app.add_subcommand("coverage", "the ioctls and BC_ commands a corpus exercises");
  cov->add_option("--corpus", corpus)->required();

  CLI11_PARSE(app, argc, argv);
  options.settle = std::chrono::milliseconds(settle_ms);
  kernel_options.settle = options.settle;
  try {
    if (*gen) return generate(seed, count, actions, out);
    if (*cov) return coverage(corpus);
    if (*run_cmd) return run(options, scripts);
    if (*rec) return record(options, corpus, drop, tracefs, raw_dir);
    if (*cmp) {
      auto shard = parse_shard(shard_text);
      if (!shard) {
        fmt::print(stderr, "binder-diff: --shard {}: expected I/N with 0 <= I < N\n", shard_text);
        return 2;
      }
      std::unique_ptr<cused::diff::EventSource> events;
      if (!events_control.empty())
        events = std::make_unique<cused::diff::CusedEvents>(events_control, events_file);
      return compare_corpus(options, corpus, path, events.get(), *shard);
    }
    if (*camp) {
      std::unique_ptr<cused::diff::EventSource> kernel_events, cused_events;
      if (!tracefs.empty() && !events_control.empty()) {
        kernel_events = std::make_unique<cused::diff::TracefsEvents>(tracefs);
        cused_events = std::make_unique<cused::diff::CusedEvents>(events_control, events_file);
      }
      return campaign(kernel_options, options, path, seed, minutes, actions, save, minimise_seconds,
                      {kernel_events.get(), cused_events.get()});
    }
    if (*min) {
      auto bytes = read_bytes(scripts[0]);
      if (!diverges(bytes, kernel_options, options, path)) {
        fmt::print("{} does not diverge\n", scripts[0]);
        return 1;
      }
      auto seconds = std::chrono::seconds(static_cast<long>(minutes * 60));
      auto small = minimise(bytes, kernel_options, options, path, seconds);
      save_divergence(save, fs::path(scripts[0]).stem().string() + "-min", small, kernel_options,
                      options);
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "binder-diff: " << e.what() << "\n";
    return 2;
  }
  return 2;
}

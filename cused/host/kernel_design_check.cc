// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/kernel_design_check.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "core/alloc/designs/registry.h"
#include "core/alloc/kernel/kernel_design.h"
#include "core/alloc/kernel/kernel_runtime.h"
#include "core/alloc/variant.h"
#include "cused/host/allocation_stress.h"
#include "cused/host/kernel_design_loader.h"

namespace fs = std::filesystem;

namespace cused::host {
namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// What the workload's run told the parent: its numbers, and the kernel's reports (the daemon's
// "cused: kernel ..." lines on stderr, which the child wrote to `log`).
struct ChildRun {
  int status = 0;  // waitpid's
  bool finished = false;
  long ops = 0, lost = 0, unexpected = 0;
  unsigned long long reclaimed = 0;
  std::vector<std::string> reports;
  std::string last_words;  // the child's last other line on stderr
};

// Runs the workload in a child process: a file whose bug corrupts memory takes the child down,
// as a kernel oops takes the task, and the verdict says so. The parent has no other thread here
// (the workload's threads are the child's), so the fork is safe.
ChildRun run_workload(core::alloc::LockVariant lock, const DesignCheckOptions& options,
                      const fs::path& log) {
  ChildRun run;
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(pipe_fds[0]);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) dup2(fd, 2);
    AllocationStressOptions stress;
    stress.threads = options.threads;
    stress.duration = options.duration;
    const AllocationStressOutcome outcome =
        run_allocation_stress({lock, core::alloc::PageTableVariant::eager}, stress);
    const std::string numbers = fmt::format("{} {} {} {}\n", outcome.ops, outcome.lost,
                                            outcome.unexpected_errors, outcome.shrinker.pages);
    (void)!write(pipe_fds[1], numbers.data(), numbers.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string numbers;
  char chunk[256];
  for (ssize_t n; (n = read(pipe_fds[0], chunk, sizeof(chunk))) != 0;)
    if (n > 0)
      numbers.append(chunk, n);
    else if (errno != EINTR)
      break;
  close(pipe_fds[0]);
  while (waitpid(pid, &run.status, 0) < 0 && errno == EINTR) {
  }
  run.finished = std::sscanf(numbers.c_str(), "%ld %ld %ld %llu", &run.ops, &run.lost,
                             &run.unexpected, &run.reclaimed) == 4;
  std::istringstream lines(read_text(log));
  for (std::string line; std::getline(lines, line);)
    if (line.starts_with("cused: kernel"))
      run.reports.push_back(line.substr(7));
    else if (!line.empty())
      run.last_words = line;  // e.g. glibc's "free(): invalid pointer" before an abort
  return run;
}

// The check of the reports that contain one of `markers` and not `unless`.
CheckResult counted(const char* name, const std::vector<std::string>& reports,
                    std::initializer_list<const char*> markers, const char* unless = nullptr) {
  CheckResult result{name, CheckOutcome::pass, 0, ""};
  for (const std::string& line : reports)
    for (const char* marker : markers)
      if (line.find(marker) != std::string::npos &&
          (!unless || line.find(unless) == std::string::npos)) {
        if (result.count++ == 0) result.first = line;
        break;
      }
  if (result.count > 0) result.outcome = CheckOutcome::fail;
  return result;
}

CheckResult leak_check(const std::vector<std::string>& reports) {
  CheckResult result = counted(kCheckLeak, reports, {"still referenced"});
  bool all_known = true;
  for (const std::string& line : reports)
    if (line.find("still referenced") != std::string::npos)
      all_known = all_known && is_lost_install_race(line);
  if (result.count > 0 && all_known) {
    result.outcome = CheckOutcome::known;
    result.first += " [the lost install race of docs/kernel-designs.md, \"Found\"]";
  }
  return result;
}

CheckResult contents_check(const ChildRun& run) {
  CheckResult result{kCheckContents, CheckOutcome::pass,
                     static_cast<unsigned long>(run.lost + run.unexpected), ""};
  if (!run.finished) {
    result.outcome = CheckOutcome::fail;
    result.first = WIFSIGNALED(run.status)
                       ? fmt::format(
                             "the workload died of {} (a use-after-free or corruption in "
                             "the file, as a kernel oops){}",
                             strsignal(WTERMSIG(run.status)),
                             run.last_words.empty() ? "" : ": " + run.last_words)
                       : "the workload did not finish";
  } else if (run.lost > 0) {
    result.first = fmt::format("{} of {} buffers read back other than written", run.lost, run.ops);
  } else if (run.unexpected > 0) {
    result.first = fmt::format("{} allocations failed other than with -ENOSPC", run.unexpected);
  } else if (run.reclaimed == 0) {
    // Without reclaim during the run the check proved nothing.
    result.first = "the shrinker reclaimed no page during the run";
  }
  if (!result.first.empty()) result.outcome = CheckOutcome::fail;
  return result;
}

const char* outcome_text(CheckOutcome outcome) {
  switch (outcome) {
    case CheckOutcome::pass:
      return "pass";
    case CheckOutcome::fail:
      return "FAIL";
    case CheckOutcome::known:
      return "finding";
    case CheckOutcome::not_done:
      return "not done";
  }
  return "?";
}

DesignVerdict run_checks(const std::string& name, const DesignCheckOptions& options,
                         const fs::path& log) {
  DesignVerdict verdict;
  verdict.design = name;
  const core::alloc::LockVariant lock = *core::alloc::parse_lock_variant(name);
  verdict.version = core::alloc::kernel_object_of(lock)->abi->kernel_version;
  const ChildRun run = run_workload(lock, options, log);
  verdict.ops = run.ops;
  verdict.reclaimed = run.reclaimed;
  verdict.checks.push_back(counted(kCheckAtomicSleep, run.reports, {"sleeping function called"}));
  constexpr const char* kLockdep = "possible circular locking dependency";
  // Lockdep's report begins with "WARNING:" as the kernel's does; it has a row of its own.
  verdict.checks.push_back(counted(kCheckWarn, run.reports, {"WARNING:", "kernel BUG"}, kLockdep));
  verdict.checks.push_back(counted(kCheckLockHeld, run.reports, {"returned holding"}));
  verdict.checks.push_back(leak_check(run.reports));
  verdict.checks.push_back(contents_check(run));
  verdict.checks.push_back(counted(kCheckLockOrder, run.reports, {kLockdep}));
  return verdict;
}

}  // namespace

bool is_lost_install_race(const std::string& line) {
  static const std::regex race(
      R"((\d+) page\(s\) still referenced after binder_alloc_deferred_release \(vm_insert_page )"
      R"(answered -EBUSY (\d+) time\(s\), get_user_pages_remote returned (\d+) page\(s\)\))");
  std::smatch m;
  if (!std::regex_search(line, m, race) || m[2] != m[3]) return false;
  const unsigned long pages = std::stoul(m[1]), losses = std::stoul(m[2]);
  return pages >= 1 && pages <= losses;
}

bool DesignVerdict::passed() const {
  for (const CheckResult& check : checks)
    if (check.outcome == CheckOutcome::fail) return false;
  return true;
}

const CheckResult& DesignVerdict::check(const std::string& name) const {
  for (const CheckResult& check : checks)
    if (check.name == name) return check;
  throw std::out_of_range("no check " + name);
}

static std::optional<DesignVerdict> check_kernel_design_or_throw(const DesignCheckOptions& options,
                                                                 std::string& error) {
  enable_kernel_designs();
  // Before the object's first lock: lockdep sees the file's order from the start.
  core::alloc::set_kernel_lockdep(true);
  const KernelDesignPaths paths = kernel_design_paths();
  const std::string spec =
      options.tree.starts_with("kernel:") ? options.tree.substr(7) : options.tree;
  // --patch P is the design kernel:TREE+P (patched_kernel_tree.h): patched in a scratch copy
  // that is gone before the workload starts, cached under the patched sources' hash.
  std::string name = "kernel:" + spec;
  for (const fs::path& patch : options.patches) name += "+" + fs::absolute(patch).string();
  auto source = kernel_source_of(name, paths, error);
  if (!source) return std::nullopt;
  if (!core::alloc::parse_lock_variant(name)) {
    error = core::alloc::last_resolve_error();
    return std::nullopt;
  }
  std::error_code ec;
  fs::create_directories(paths.cache, ec);
  const fs::path log = paths.cache / fmt::format("check-design-{}.log", getpid());
  DesignVerdict verdict = run_checks(name, options, log);
  fs::remove(log, ec);
  verdict.design = "kernel:" + spec;
  for (const fs::path& patch : source->patches) verdict.patches.push_back(patch.filename());
  return verdict;
}

std::optional<DesignVerdict> check_kernel_design(const DesignCheckOptions& options,
                                                 std::string& error) {
  try {
    return check_kernel_design_or_throw(options, error);
  } catch (const std::exception& e) {  // the scratch folder, the pipe or the fork failed
    error = e.what();
    return std::nullopt;
  }
}

std::string format_verdict(const DesignVerdict& verdict) {
  std::string text = fmt::format("check-design {}: Linux {}", verdict.design, verdict.version);
  for (const std::string& patch : verdict.patches) text += " + " + patch;
  text += fmt::format(
      "\n{} allocations by client-shaped threads, {} pages reclaimed by the "
      "shrinker meanwhile\n\n",
      verdict.ops, verdict.reclaimed);
  text += fmt::format("{:<40} {:<9} {:>7}  {}\n", "check", "verdict", "reports", "first report");
  for (const CheckResult& check : verdict.checks)
    text += fmt::format("{:<40} {:<9} {:>7}  {}\n", check.name, outcome_text(check.outcome),
                        check.count, check.first.empty() ? "-" : check.first);
  text += fmt::format("\nverdict: {}\n", verdict.passed() ? "PASS" : "FAIL");
  return text;
}

}  // namespace cused::host

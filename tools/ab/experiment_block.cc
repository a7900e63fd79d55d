// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/experiment_block.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "tools/ab/workload.h"

namespace cused::tools::ab {

namespace {

constexpr int kBackgroundNice = 19;  // a phone's background app

// A CPU-bound program (conditions.cpu_hogs): the other apps of a phone, which preempt a nice-19
// lock holder.
void spin(long) {
  for (;;) asm volatile("" ::: "memory");
}

// The memory cgroup's anonymous program: keeps touching `mib` MiB, twice the cgroup's limit, so
// that every page the daemon installs waits for reclaim to compress another out. It stops itself
// first, so that it is in the cgroup before it touches anything (start_memory_pressure).
void touch_memory(long mib) {
  kill(getpid(), SIGSTOP);
  std::size_t pages = static_cast<std::size_t>(mib) * 256;
  auto* memory = static_cast<volatile unsigned char*>(
      mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (memory == MAP_FAILED) _exit(1);
  for (;;)
    for (std::size_t page = 0; page < pages; ++page) memory[page * 4096] = page & 255;
}

void wait_for(const std::filesystem::path& path, ChildProcess& daemon, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (std::filesystem::exists(path)) return;
    if (!daemon.running())
      throw std::runtime_error(fmt::format("cused {} before it created {}",
                                           describe_wait_status(daemon.ended_status()),
                                           path.string()));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  throw std::runtime_error(
      fmt::format("cused did not create {} within {} s", path.string(), limit.count()));
}

}  // namespace

ExperimentBlock::ExperimentBlock(const Experiment& experiment, const BlockPrograms& programs,
                                 const std::string& mount)
    : mount_(mount), device_names_{experiment.a.name, experiment.b.name} {
  block_mount_.emplace(mount_);
  const auto& conditions = experiment.conditions;
  if (conditions.memcg) {
    if (conditions.memcg->zram) zram_.emplace();
    cgroup_.emplace(conditions.memcg->mib);
  }
  start_daemon(experiment, programs);
  if (conditions.memcg) start_memory_pressure(*conditions.memcg);
  start_servicemanagers(programs);
  start_background(experiment, programs);
}

ExperimentBlock::~ExperimentBlock() { stop(); }

void ExperimentBlock::start_daemon(const Experiment& experiment, const BlockPrograms& programs) {
  std::vector<std::string> argv{programs.cused, "--mount", mount_, "--foreground"};
  for (const auto* device : {&experiment.a, &experiment.b}) {
    argv.push_back("--device");
    argv.push_back(device->name + ":" + effective_variant(experiment, *device));
  }
  if (experiment.conditions.shrinker_stress) argv.push_back("--shrinker-stress");
  daemon_.emplace(argv, ChildOptions{.nice = experiment.conditions.daemon_nice});
  // In the cgroup at once: its page installs are what the condition makes slow.
  if (cgroup_) cgroup_->add(daemon_->pid());
  // A kernel design's first use compiles the tree's file (docs/kernel-designs.md: 4-8 s a tree
  // here, more on a loaded machine); later blocks find it in the cache.
  bool kernel = false;
  for (const auto* device : {&experiment.a, &experiment.b})
    kernel = kernel || effective_variant(experiment, *device).find("kernel:") != std::string::npos;
  const std::chrono::seconds limit(kernel ? 300 : 10);
  for (const auto& name : device_names_)
    wait_for(std::filesystem::path(mount_) / name, *daemon_, limit);
}

void ExperimentBlock::start_memory_pressure(const ExperimentMemoryCgroup& memcg) {
  auto program = std::make_unique<ChildProcess>(touch_memory, 2L * memcg.mib,
                                                ChildOptions{.nice = kBackgroundNice});
  int status = 0;
  waitpid(program->pid(), &status, WUNTRACED);  // stopped itself: not touching yet
  cgroup_->add(program->pid());
  kill(program->pid(), SIGCONT);
  fmt::print(stderr,
             "   memory cgroup {}: {} MiB, the daemon and a {} MiB program swapping to {}\n",
             cgroup_->path().string(), memcg.mib, 2 * memcg.mib,
             zram_ && zram_->device() ? fmt::format("zram{}", *zram_->device()) : "swap");
  programs_.push_back(std::move(program));
}

void ExperimentBlock::start_servicemanagers(const BlockPrograms& programs) {
  // Every binder program runs under `cused run` (docs/run.md), the daemon's seccomp frontend.
  for (const auto& name : device_names_)
    programs_.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{programs.cused, "run", "--mount", mount_, "--",
                                 programs.servicemanager, "--device", mount_ + "/" + name},
        ChildOptions{}));
  // The servicemanagers register as context managers.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
}

void ExperimentBlock::start_background(const Experiment& experiment,
                                       const BlockPrograms& programs) {
  const auto& conditions = experiment.conditions;
  for (const auto& name : device_names_) {
    auto device = mount_ + "/" + name;
    // Low-priority callers of the workload's own services: their transactions take the same
    // proc's allocator lock as the workload's calls.
    if (conditions.background_traffic)
      repeating_.push_back(std::make_unique<RepeatingProgram>(
          std::vector<std::string>{programs.cused, "run", "--mount", mount_, "--",
                                   programs.binder_messaging, "-d", device, "-g", "2", "-l", "200"},
          ChildOptions{.nice = kBackgroundNice, .quiet = true}));
    if (conditions.background_callers)
      programs_.push_back(std::make_unique<ChildProcess>(
          std::vector<std::string>{programs.binder_background, "--device", device, "-t", "2", "-s",
                                   "4096"},
          ChildOptions{.nice = kBackgroundNice, .quiet = true}));
  }
  for (int hog = 0; hog < conditions.cpu_hogs; ++hog)
    programs_.push_back(std::make_unique<ChildProcess>(spin, 0, ChildOptions{}));
}

bool ExperimentBlock::running() {
  if (stopped_ || !daemon_) return false;
  if (daemon_->running()) return true;
  daemon_status_ = daemon_->ended_status();
  return false;
}

std::string ExperimentBlock::describe_end() const {
  return stopped_ ? "the block was stopped" : "its cused " + describe_wait_status(daemon_status_);
}

void ExperimentBlock::stop(std::chrono::duration<double> grace) {
  if (stopped_) return;
  stopped_ = true;
  // Newest first: background programs, servicemanagers, the daemon, its cgroup and swap, the
  // mount.
  repeating_.clear();
  while (!programs_.empty()) {
    programs_.back()->stop(grace);
    programs_.pop_back();
  }
  if (daemon_) daemon_->stop(grace);
  daemon_.reset();
  cgroup_.reset();
  zram_.reset();
  block_mount_.reset();
}

}  // namespace cused::tools::ab

// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/repeating_program.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <system_error>

namespace cused::tools::ab {

RepeatingProgram::RepeatingProgram(std::vector<std::string> argv, ChildOptions options)
    : argv_(std::move(argv)), options_(options) {
  // Registered before any run's own cleanup, so it runs after them: by then no new run starts.
  on_stop_signal_.emplace([this] {
    std::lock_guard guard(lock_);
    stopped_ = true;
    if (current_ > 0) kill(-current_, SIGKILL);
  });
  thread_ = std::thread([this] { repeat(); });
}

RepeatingProgram::~RepeatingProgram() {
  {
    std::lock_guard guard(lock_);
    stopped_ = true;
    if (current_ > 0) kill(-current_, SIGTERM);
  }
  stopped_changed_.notify_all();
  thread_.join();
  on_stop_signal_.reset();
}

void RepeatingProgram::repeat() {
  for (;;) {
    std::unique_ptr<ChildProcess> run;
    {
      std::lock_guard guard(lock_);
      if (stopped_) return;
      try {
        run = std::make_unique<ChildProcess>(argv_, options_);
      } catch (const std::system_error& error) {  // the block goes on without it, said once
        fmt::print(stderr, "binder-ab: background program: {}\n", error.what());
        return;
      }
      current_ = run->pid();
    }
    while (run->running()) {
      std::unique_lock guard(lock_);
      if (stopped_changed_.wait_for(guard, std::chrono::milliseconds(50),
                                    [this] { return stopped_; }))
        break;
    }
    bool failed =
        run->running() || !WIFEXITED(run->ended_status()) || WEXITSTATUS(run->ended_status()) != 0;
    {
      std::lock_guard guard(lock_);
      current_ = -1;
    }
    run.reset();  // stopped with its group if it still runs
    std::unique_lock guard(lock_);
    if (stopped_changed_.wait_for(
            guard, failed ? std::chrono::milliseconds(200) : std::chrono::milliseconds(0),
            [this] { return stopped_; }))
      return;
  }
}

}  // namespace cused::tools::ab

// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/stop_signals.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace cused::tools::ab {

namespace {

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, signal);
  return set;
}

struct Cleanups {
  std::mutex lock;
  unsigned long next_id = 0;
  std::map<unsigned long, std::function<void()>> by_id;  // ids grow: newest last
};

Cleanups& cleanups() {
  static Cleanups all;
  return all;
}

std::atomic<bool> stop_signalled{false};

[[noreturn]] void run_cleanups_and_exit(int signal) {
  stop_signalled = true;
  std::vector<std::function<void()>> newest_first;
  {
    std::lock_guard guard(cleanups().lock);
    for (auto it = cleanups().by_id.rbegin(); it != cleanups().by_id.rend(); ++it)
      newest_first.push_back(it->second);
  }
  for (auto& cleanup : newest_first) {
    try {
      cleanup();
    } catch (...) {  // the next cleanup still runs
    }
  }
  _exit(128 + signal);
}

}  // namespace

void watch_stop_signals() {
  sigset_t set = stop_signal_set();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int signal = 0;
    while (sigwait(&set, &signal) != 0) {
    }
    run_cleanups_and_exit(signal);
  }).detach();
}

void wait_if_stopping() {
  while (stop_signalled) pause();  // the watcher's _exit ends the process
}

void spawn_in_own_group(posix_spawnattr_t* attributes) {
  posix_spawnattr_setflags(attributes,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(attributes, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(attributes, &none);
  sigset_t defaults = stop_signal_set();
  posix_spawnattr_setsigdefault(attributes, &defaults);
}

StopCleanup::StopCleanup(std::function<void()> cleanup) {
  std::lock_guard guard(cleanups().lock);
  id_ = cleanups().next_id++;
  cleanups().by_id.emplace(id_, std::move(cleanup));
}

StopCleanup::~StopCleanup() {
  std::lock_guard guard(cleanups().lock);
  cleanups().by_id.erase(id_);
}

}  // namespace cused::tools::ab

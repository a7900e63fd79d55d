// SPDX-License-Identifier: GPL-2.0-only
#include "cused/fatal_cleanup.h"

#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstring>
#include <exception>

namespace cused {

namespace {

// Fixed storage: the handlers may run in the middle of an allocation.
struct Path {
  char text[PATH_MAX] = {};
  bool set(const std::string& value) {
    if (value.size() >= sizeof text) return false;
    std::memcpy(text, value.c_str(), value.size() + 1);
    return true;
  }
};
struct LinkEntry {
  std::atomic<bool> used{false};
  Path path, target;
};

constexpr std::array<int, 5> kFatalSignals{SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
constexpr std::size_t kMaxLinks = 64;

Path g_mount;
std::atomic<bool> g_mount_set{false};
std::array<LinkEntry, kMaxLinks> g_links;

// Removes `entry`'s link if it still points where the daemon made it point.
void remove_if_ours(const LinkEntry& entry) {
  char current[PATH_MAX];
  ssize_t length = readlink(entry.path.text, current, sizeof current - 1);
  if (length < 0) return;
  current[length] = '\0';
  if (std::strcmp(current, entry.target.text) == 0) unlink(entry.path.text);
}

void on_fatal_signal(int signal) {
  FatalCleanup::run();
  // The default action now: the process ends with this signal (and its core dump), as it would
  // have without the handler.
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  raise(signal);
}

[[noreturn]] void on_terminate() {
  static const char message[] = "cused: terminating (an exception nobody handled): cleaning up\n";
  [[maybe_unused]] auto written = write(STDERR_FILENO, message, sizeof message - 1);
  FatalCleanup::run();
  std::abort();
}

}  // namespace

void FatalCleanup::install() {
  static const bool installed = [] {
    for (int signal : kFatalSignals) {
      struct sigaction action {};
      action.sa_handler = on_fatal_signal;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND | SA_NODEFER;
      sigaction(signal, &action, nullptr);
    }
    std::set_terminate(on_terminate);
    return true;
  }();
  (void)installed;
}

void FatalCleanup::set_mount(const std::string& path) {
  g_mount_set.store(false);
  if (!path.empty() && g_mount.set(path)) g_mount_set.store(true);
}

void FatalCleanup::add_link(const std::string& path, const std::string& target) {
  // Called while the daemon starts, from one thread; the handlers only read entries marked used.
  for (auto& entry : g_links) {
    if (entry.used.load() || !entry.path.set(path) || !entry.target.set(target)) continue;
    entry.used.store(true);
    return;
  }
}

void FatalCleanup::remove_link(const std::string& path) {
  for (auto& entry : g_links)
    if (entry.used.load() && path == entry.path.text) entry.used.store(false);
}

void FatalCleanup::run() noexcept {
  for (auto& entry : g_links)
    if (entry.used.exchange(false)) remove_if_ours(entry);
  // Detached, not unmounted: a FUSE mount whose daemon is dying cannot answer a plain unmount's
  // requests; MNT_DETACH takes it out of the namespace at once.
  if (g_mount_set.exchange(false)) umount2(g_mount.text, MNT_DETACH);
}

}  // namespace cused

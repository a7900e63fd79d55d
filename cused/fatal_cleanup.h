// SPDX-License-Identifier: GPL-2.0-only
// What the daemon undoes even when it dies of a bug: a fatal signal (SIGSEGV, SIGBUS, SIGILL,
// SIGFPE, SIGABRT) or std::terminate skips every destructor, which would leave clients a dangling
// mount ("Transport endpoint is not connected") and /dev links into it. The handlers installed
// here detach the mount and remove the links the daemon made, with async-signal-safe calls only,
// then let the signal end the process as it would have.
#pragma once

#include <string>

namespace cused {

class FatalCleanup {
 public:
  // Installs the signal and terminate handlers (once; later calls do nothing).
  static void install();
  // The mount to detach; empty: none (the clean unmount has happened).
  static void set_mount(const std::string& path);
  // A --link symlink pointing at `target`, removed only while it still does.
  static void add_link(const std::string& path, const std::string& target);
  static void remove_link(const std::string& path);
  // Runs the cleanup now (what the handlers do). Idempotent.
  static void run() noexcept;
};

// Forgets the mount when it goes out of scope: declared before the Mount, so that a fatal error
// anywhere up to the end of the clean unmount still detaches it.
struct ForgetMountAtExit {
  ForgetMountAtExit() = default;
  ForgetMountAtExit(const ForgetMountAtExit&) = delete;
  ForgetMountAtExit& operator=(const ForgetMountAtExit&) = delete;
  ~ForgetMountAtExit() { FatalCleanup::set_mount({}); }
};

}  // namespace cused

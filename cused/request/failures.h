// SPDX-License-Identifier: GPL-2.0-only
// No exception leaves a request handler. Every frontend entry point runs its handler through
// run_guarded(): an exception that escapes it fails only that request (the frontend answers it
// with an errno, as the kernel fails a call it cannot serve), is logged in one line and counted
// per entry point; binder_logs/stats prints the counts (docs/reliability.md).
//
// Failures can be injected for tests: RequestFailures::inject(), or CUSED_INJECT_FAILURE in the
// daemon's environment (parse_injections()).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "core/sync/mutex.h"

namespace cused {

// Where a request came in.
enum class RequestEntry : unsigned {
  kBinderfs,  // a binderfs device node, the root, features/
  kControl,   // binder-control
  kLogs,      // binder_logs/
  kCuse,      // a CUSE device, and its mmap socket
  kRun,       // a `cused run` program's notified ioctl, and the run socket
  kWorker,    // a daemon thread's unit of work (interrupt delivery, io_uring replies, thread exit)
  kCount,
};
std::string_view entry_name(RequestEntry entry);

class RequestFailures {
 public:
  // What an injected failure does: throw (the handler fails, the daemon goes on), or end the
  // daemon the way a bug would (a fatal signal, std::terminate) to test the exit paths.
  enum class Injected { kThrow, kCrash, kTerminate };

  static RequestFailures& global();

  // Logs one line about the exception being handled and counts it; returns the errno to fail the
  // request with: ENOMEM for an allocation failure, a system_error's own errno, EIO otherwise.
  int record(RequestEntry entry, std::string_view op, std::exception_ptr error) noexcept;
  std::uint64_t count(RequestEntry entry) const;
  // "cused: requests failed by an exception: binderfs 0 control 0 ..." for binder_logs/stats.
  void print(std::string& out) const;

  // The next `times` requests of `op` at `entry` fail as `how` (tests).
  void inject(RequestEntry entry, std::string op, unsigned times = 1,
              Injected how = Injected::kThrow) CUSED_EXCLUDES(lock_);
  // Throws (or crashes) if a failure was injected for this request.
  void maybe_inject(RequestEntry entry, std::string_view op) CUSED_EXCLUDES(lock_);

 private:
  struct Injection {
    RequestEntry entry;
    std::string op;
    unsigned times;
    Injected how;
  };
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(RequestEntry::kCount)> counts_{};
  std::atomic<bool> armed_{false};  // the request path looks at the list only when armed
  sync::Mutex lock_;
  std::vector<Injection> injections_ CUSED_GUARDED_BY(lock_);
};

// The exception an injected failure throws.
struct InjectedFailure : std::exception {
  const char* what() const noexcept override { return "injected failure"; }
};

// Arms the injections of `spec`, "ENTRY:OP[:N|crash|terminate]" separated by commas (ENTRY as
// entry_name prints it). False, with `error` set, on a bad spec.
bool parse_injections(std::string_view spec, std::string& error);

// Runs `body` for one request; if it throws, records the failure and calls `fail(errno)`, which
// must answer the request if `body` had not (an exception out of `fail` is swallowed).
template <typename Body, typename Fail>
void run_guarded(RequestEntry entry, std::string_view op, Body&& body, Fail&& fail) noexcept {
  RequestFailures& failures = RequestFailures::global();
  try {
    failures.maybe_inject(entry, op);
    body();
  } catch (...) {
    int err = failures.record(entry, op, std::current_exception());
    try {
      fail(err);
    } catch (...) {
    }
  }
}

}  // namespace cused

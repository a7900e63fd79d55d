// SPDX-License-Identifier: GPL-2.0-only
// The client side of Android 10's service-manager protocol (handle 0, interface
// android.os.IServiceManager), as libbinder's BpServiceManager speaks it. docs/servicemanager.md
// has the wire format; tools/servicemanager is the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/ipc_thread.h"

namespace cused::client {

inline constexpr std::u16string_view kServiceManagerInterface = u"android.os.IServiceManager";

// Transaction codes (IBinder::FIRST_CALL_TRANSACTION + n, and IBinder's PING).
enum ServiceManagerCode : std::uint32_t {
  kGetService = 1,
  kCheckService = 2,
  kAddService = 3,
  kListServices = 4,
  kPingTransaction = ('_' << 24) | ('P' << 16) | ('N' << 8) | 'G',
};

// IServiceManager's dumpsys priority flags (Android 9+): ADD_SERVICE carries one, LIST_SERVICES
// a mask.
inline constexpr std::int32_t kDumpPriorityCritical = 1;
inline constexpr std::int32_t kDumpPriorityHigh = 2;
inline constexpr std::int32_t kDumpPriorityNormal = 4;
inline constexpr std::int32_t kDumpPriorityDefault = 8;
inline constexpr std::int32_t kDumpPriorityAll = 15;

class ServiceManagerProxy {
 public:
  explicit ServiceManagerProxy(IpcThread& thread) : thread_(thread) {}

  std::int32_t ping();
  // As libbinder's defaultServiceManager(): pings until a context manager answers, for at most
  // `limit`. After `notice_after` without an answer it says once on `notice` (unless null)
  // "PROGRAM: waiting for a context manager on DEVICE (start servicemanager)", as libbinder says
  // "Waiting for service manager". True once one answers, false at the limit; throws ProgramError
  // (exit code 3) when the daemon serving the device has gone, which no wait mends.
  bool wait_until_answering(std::chrono::milliseconds limit, std::FILE* notice = stderr,
                            std::chrono::milliseconds notice_after = kWaitNoticeAfter);
  static constexpr std::chrono::milliseconds kWaitNoticeAfter{250};
  // Registers a local object (BinderProcess::add_local_object). kOk or the error status.
  std::int32_t add_service(std::string_view name, binder_uintptr_t object,
                           bool allow_isolated = false,
                           std::int32_t dump_priority = kDumpPriorityDefault);
  // The service's handle, with one strong reference (BC_ACQUIRE) that the caller owns; nullopt
  // when the name is unknown (or names an object of this very process).
  std::optional<std::uint32_t> get_service(std::string_view name);
  std::optional<std::uint32_t> check_service(std::string_view name);
  // Every name, asking index 0, 1, ... until the service manager answers with an error.
  std::vector<std::string> list_services(std::int32_t dump_priority = kDumpPriorityAll);

 private:
  std::optional<std::uint32_t> lookup(std::uint32_t code, std::string_view name);

  IpcThread& thread_;
};

// wait_until_answering on a process of its own on `device`, closed again before it returns: what
// a program that forks its binder users calls first, so that the wait is said once. Throws
// ProgramError "gave up waiting for a context manager on DEVICE after N s (start
// servicemanager)" at the limit, DeviceOpenError when the device cannot be opened.
void await_context_manager(const std::string& device, std::chrono::seconds limit);

}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
// The service manager's state and its answers to Android 10's IServiceManager transactions
// (docs/servicemanager.md): names -> handles, a strong reference (BC_ACQUIRE) per registered
// name, one death notification per handle, and dead services dropped.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "client/ipc_thread.h"

namespace cused::tools {

// What Android 10's servicemanager answers to anything it refuses: status -1 (TF_STATUS_CODE).
inline constexpr std::int32_t kRefused = -1;

class ServiceRegistry {
 public:
  // `thread` is the one looper thread that serves (and sends the reference commands).
  ServiceRegistry(client::IpcThread& thread, bool verbose) : thread_(thread), verbose_(verbose) {}

  std::int32_t on_transaction(const client::IncomingTransaction& txn, client::Parcel& reply);
  // BR_DEAD_BINDER: the cookie is the handle whose node died.
  void on_death(binder_uintptr_t cookie);

  std::size_t size() const { return services_.size(); }

 private:
  struct Service {
    std::uint32_t handle = 0;
    bool allow_isolated = false;
    std::int32_t dump_priority = 0;
  };

  std::int32_t find(const client::Parcel& data, client::Parcel& reply);
  std::int32_t add(const client::Parcel& data, client::Parcel& reply);
  std::int32_t list(const client::Parcel& data, client::Parcel& reply) const;
  void hold(std::uint32_t handle);
  void drop(std::uint32_t handle);
  void log(const std::string& line) const;

  client::IpcThread& thread_;
  const bool verbose_;
  std::map<std::u16string, Service> services_;
  std::map<std::uint32_t, std::size_t> names_per_handle_;
};

}  // namespace cused::tools

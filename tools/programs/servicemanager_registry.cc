// SPDX-License-Identifier: GPL-2.0-only
#include "tools/programs/servicemanager_registry.h"

#include <fmt/format.h>

#include <cstdio>

#include "client/service_manager.h"

namespace cused::tools {

using client::Parcel;

std::int32_t ServiceRegistry::on_transaction(const client::IncomingTransaction& txn,
                                             Parcel& reply) {
  if (txn.code == client::kPingTransaction) return client::kOk;
  // Android 10's header: strict-mode policy, work source, then the interface name.
  if (!txn.data.enforce_interface(client::kServiceManagerInterface)) {
    log(fmt::format("code {} from pid {}: wrong interface token", txn.code, txn.sender_pid));
    return kRefused;
  }
  switch (txn.code) {
    case client::kGetService:
    case client::kCheckService:
      return find(txn.data, reply);
    case client::kAddService:
      return add(txn.data, reply);
    case client::kListServices:
      return list(txn.data, reply);
    default:
      log(fmt::format("unknown code {}", txn.code));
      return kRefused;
  }
}

// Found: a handle object (the driver turns it into the caller's own handle or local binder).
// Not found: a single zero word, which libbinder reads as a null binder.
std::int32_t ServiceRegistry::find(const Parcel& data, Parcel& reply) {
  auto name = data.read_string16();
  if (!name) return kRefused;
  auto found = services_.find(*name);
  if (found == services_.end()) {
    reply.write_int32(0);
    return client::kOk;
  }
  reply.write_strong_handle(found->second.handle);
  return client::kOk;
}

std::int32_t ServiceRegistry::add(const Parcel& data, Parcel& reply) {
  auto name = data.read_string16();
  auto object = data.read_object();
  auto allow_isolated = data.read_int32();
  auto dump_priority = data.read_int32();
  // Android 10 refuses empty names, names over 127 chars, and anything but a reference.
  if (!name || name->empty() || name->size() > 127 || !object ||
      object->hdr.type != BINDER_TYPE_HANDLE || object->handle == 0)
    return kRefused;
  Service service{object->handle, allow_isolated.value_or(0) != 0,
                  dump_priority.value_or(client::kDumpPriorityDefault)};
  hold(service.handle);  // before dropping an old registration of the same handle
  auto [entry, inserted] = services_.try_emplace(*name, service);
  if (!inserted) {
    log(fmt::format("{} registered again, replacing handle {}", client::utf16_to_utf8(*name),
                    entry->second.handle));
    drop(entry->second.handle);
    entry->second = service;
  }
  log(fmt::format("add {} -> handle {}", client::utf16_to_utf8(*name), service.handle));
  reply.write_int32(0);  // no exception
  return client::kOk;
}

// The index-th name among those whose dump priority meets the mask; an error past the end.
std::int32_t ServiceRegistry::list(const Parcel& data, Parcel& reply) const {
  auto index = data.read_int32();
  std::int32_t mask = data.read_int32().value_or(client::kDumpPriorityAll);
  if (!index || *index < 0) return kRefused;
  std::int32_t left = *index;
  for (const auto& [name, service] : services_) {
    if (!(service.dump_priority & mask)) continue;
    if (left-- == 0) {
      reply.write_string16(std::u16string_view(name));
      return client::kOk;
    }
  }
  return kRefused;
}

// One strong reference per registered name; one death notification per handle.
void ServiceRegistry::hold(std::uint32_t handle) {
  thread_.acquire(handle);
  if (names_per_handle_[handle]++ == 0) thread_.request_death_notification(handle, handle);
}

void ServiceRegistry::drop(std::uint32_t handle) {
  auto count = names_per_handle_.find(handle);
  if (count == names_per_handle_.end()) return;
  if (--count->second == 0) {
    // The notification must be cleared while the reference still exists.
    thread_.clear_death_notification(handle, handle);
    names_per_handle_.erase(count);
  }
  thread_.release(handle);
}

void ServiceRegistry::on_death(binder_uintptr_t cookie) {
  auto handle = static_cast<std::uint32_t>(cookie);
  auto count = names_per_handle_.find(handle);
  if (count == names_per_handle_.end()) return;
  for (auto it = services_.begin(); it != services_.end();) {
    if (it->second.handle != handle) {
      ++it;
      continue;
    }
    log(fmt::format("{} died", client::utf16_to_utf8(it->first)));
    thread_.release(handle);
    it = services_.erase(it);
  }
  names_per_handle_.erase(count);
}

void ServiceRegistry::log(const std::string& line) const {
  if (verbose_) std::fprintf(stderr, "servicemanager: %s\n", line.c_str());
}

}  // namespace cused::tools

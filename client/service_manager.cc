// SPDX-License-Identifier: GPL-2.0-only
#include "client/service_manager.h"

#include <errno.h>
#include <fmt/format.h>

#include <thread>

#include "client/binder_process.h"
#include "client/program_errors.h"

namespace cused::client {

namespace {

Parcel request() {
  Parcel data;
  data.write_interface_token(kServiceManagerInterface);
  return data;
}

}  // namespace

std::int32_t ServiceManagerProxy::ping() {
  Parcel data, reply;
  return thread_.transact(0, kPingTransaction, data, &reply);
}

bool ServiceManagerProxy::wait_until_answering(std::chrono::milliseconds limit, std::FILE* notice,
                                               std::chrono::milliseconds notice_after) {
  using Clock = std::chrono::steady_clock;
  const std::string& device = thread_.process().options().device;
  auto start = Clock::now();
  bool noticed = false;
  for (;;) {
    std::int32_t status = ping();
    if (status == kOk) return true;
    if (status < 0 && binder_daemon_gone(-status))
      throw ProgramError(describe_daemon_gone(device, -status), 3);
    auto waited = Clock::now() - start;
    if (waited >= limit) return false;
    if (!noticed && notice && waited >= notice_after) {
      std::fprintf(notice, "%s: waiting for a context manager on %s (start servicemanager)\n",
                   program_invocation_short_name, device.c_str());
      std::fflush(notice);
      noticed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void await_context_manager(const std::string& device, std::chrono::seconds limit) {
  ProcessOptions options;
  options.device = device;
  options.max_threads = 0;
  BinderProcess process(options);
  IpcThread thread(process);
  if (!ServiceManagerProxy(thread).wait_until_answering(limit))
    throw ProgramError(
        fmt::format("gave up waiting for a context manager on {} after {} s (start servicemanager)",
                    device, limit.count()));
}

std::int32_t ServiceManagerProxy::add_service(std::string_view name, binder_uintptr_t object,
                                              bool allow_isolated, std::int32_t dump_priority) {
  Parcel data = request();
  data.write_string16(name);
  data.write_strong_binder(object, object, thread_.process().object_flags(object));
  data.write_int32(allow_isolated ? 1 : 0);
  data.write_int32(dump_priority);
  Parcel reply;
  std::int32_t status = thread_.transact(0, kAddService, data, &reply);
  if (status != kOk) return status;
  // libbinder reads the reply as an exception code: 0 is success.
  return reply.read_int32().value_or(kFailedTransaction);
}

std::optional<std::uint32_t> ServiceManagerProxy::lookup(std::uint32_t code,
                                                         std::string_view name) {
  Parcel data = request();
  data.write_string16(name);
  Parcel reply;
  if (thread_.transact(0, code, data, &reply) != kOk) return std::nullopt;
  auto object = reply.read_object();
  if (!object || object->hdr.type != BINDER_TYPE_HANDLE) return std::nullopt;
  // The reply buffer holds the reference only until it is freed: take our own first.
  thread_.acquire(object->handle);
  return object->handle;
}

std::optional<std::uint32_t> ServiceManagerProxy::get_service(std::string_view name) {
  return lookup(kGetService, name);
}

std::optional<std::uint32_t> ServiceManagerProxy::check_service(std::string_view name) {
  return lookup(kCheckService, name);
}

std::vector<std::string> ServiceManagerProxy::list_services(std::int32_t dump_priority) {
  std::vector<std::string> names;
  for (std::int32_t index = 0;; ++index) {
    Parcel data = request();
    data.write_int32(index);
    data.write_int32(dump_priority);
    Parcel reply;
    if (thread_.transact(0, kListServices, data, &reply) != kOk) break;
    auto name = reply.read_string16();
    if (!name) break;
    names.push_back(utf16_to_utf8(*name));
  }
  return names;
}

}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/command_stream.h"

#include <cstdio>
#include <cstring>

namespace cused::conformance {

namespace {

template <typename T>
T Load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof(value));
  return value;
}

binder_uintptr_t AddressOf(const std::vector<std::byte>& bytes) {
  return reinterpret_cast<binder_uintptr_t>(bytes.data());
}

}  // namespace

Commands& Commands::with_payload(std::uint32_t command, const void* payload, std::size_t size) {
  const auto* word = reinterpret_cast<const std::byte*>(&command);
  bytes_.insert(bytes_.end(), word, word + sizeof(command));
  const auto* bytes = static_cast<const std::byte*>(payload);
  bytes_.insert(bytes_.end(), bytes, bytes + size);
  return *this;
}

Commands& Commands::code(std::uint32_t command) { return with_payload(command, nullptr, 0); }

Commands& Commands::transaction_data(std::uint32_t command, std::uint32_t handle,
                                     std::uint32_t code, std::string_view data, std::uint32_t flags,
                                     const std::vector<EmbeddedObject>& objects) {
  std::vector<EmbeddedBytes> bytes;
  for (const EmbeddedObject& embedded : objects)
    bytes.push_back(EmbeddedBytes::Of(embedded.offset, embedded.object));
  binder_transaction_data txn = build(handle, code, data, flags, bytes);
  return with_payload(command, &txn, sizeof(txn));
}

binder_transaction_data Commands::build(std::uint32_t handle, std::uint32_t code,
                                        std::string_view data, std::uint32_t flags,
                                        const std::vector<EmbeddedBytes>& objects) {
  auto& buffer =
      payloads_.emplace_back(reinterpret_cast<const std::byte*>(data.data()),
                             reinterpret_cast<const std::byte*>(data.data()) + data.size());
  auto& offsets = payloads_.emplace_back(objects.size() * sizeof(binder_size_t));
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const EmbeddedBytes& embedded = objects[i];
    if (buffer.size() < embedded.offset + embedded.bytes.size())
      buffer.resize(embedded.offset + embedded.bytes.size());
    std::memcpy(buffer.data() + embedded.offset, embedded.bytes.data(), embedded.bytes.size());
    binder_size_t offset = embedded.offset;
    std::memcpy(offsets.data() + i * sizeof(offset), &offset, sizeof(offset));
  }
  binder_transaction_data txn{};
  txn.target.handle = handle;
  txn.code = code;
  txn.flags = flags;
  txn.data_size = buffer.size();
  txn.offsets_size = offsets.size();
  txn.data.ptr.buffer = AddressOf(buffer);
  txn.data.ptr.offsets = AddressOf(offsets);
  return txn;
}

Commands& Commands::sg(std::uint32_t command, const binder_transaction_data& txn,
                       binder_size_t buffers_size) {
  binder_transaction_data_sg sg{txn, buffers_size};
  return with_payload(command, &sg, sizeof(sg));
}

Commands& Commands::transaction_sg(std::uint32_t handle, std::uint32_t code, std::string_view data,
                                   std::uint32_t flags, const std::vector<EmbeddedBytes>& objects,
                                   binder_size_t buffers_size) {
  return sg(BC_TRANSACTION_SG, build(handle, code, data, flags, objects), buffers_size);
}

Commands& Commands::reply_sg(std::uint32_t code, std::string_view data, std::uint32_t flags,
                             const std::vector<EmbeddedBytes>& objects,
                             binder_size_t buffers_size) {
  return sg(BC_REPLY_SG, build(0, code, data, flags, objects), buffers_size);
}

Commands& Commands::transaction(std::uint32_t handle, std::uint32_t code, std::string_view data,
                                std::uint32_t flags, const std::vector<EmbeddedObject>& objects) {
  return transaction_data(BC_TRANSACTION, handle, code, data, flags, objects);
}

Commands& Commands::reply(std::uint32_t code, std::string_view data, std::uint32_t flags,
                          const std::vector<EmbeddedObject>& objects) {
  return transaction_data(BC_REPLY, 0, code, data, flags, objects);
}

Commands& Commands::free_buffer(binder_uintptr_t buffer) {
  return with_payload(BC_FREE_BUFFER, &buffer, sizeof(buffer));
}

Commands& Commands::ref(std::uint32_t command, std::uint32_t handle) {
  return with_payload(command, &handle, sizeof(handle));
}

Commands& Commands::ref_done(std::uint32_t command, binder_uintptr_t ptr, binder_uintptr_t cookie) {
  binder_ptr_cookie payload{ptr, cookie};
  return with_payload(command, &payload, sizeof(payload));
}

Commands& Commands::death(std::uint32_t command, std::uint32_t handle, binder_uintptr_t cookie) {
  binder_handle_cookie payload{handle, cookie};
  return with_payload(command, &payload, sizeof(payload));
}

Commands& Commands::dead_binder_done(binder_uintptr_t cookie) {
  return with_payload(BC_DEAD_BINDER_DONE, &cookie, sizeof(cookie));
}

std::string Return::data() const {
  const auto* bytes = reinterpret_cast<const char*>(txn.data.ptr.buffer);
  return bytes ? std::string(bytes, txn.data_size) : std::string();
}

flat_binder_object Return::object_at(std::size_t offset) const {
  flat_binder_object object{};
  if (offset + sizeof(object) <= txn.data_size)
    std::memcpy(&object, reinterpret_cast<const std::byte*>(txn.data.ptr.buffer) + offset,
                sizeof(object));
  return object;
}

std::vector<Return> ParseReturns(const std::byte* buffer, std::size_t size, std::string* error) {
  std::vector<Return> returns;
  std::size_t at = 0;
  while (at + sizeof(std::uint32_t) <= size) {
    Return item;
    item.code = Load<std::uint32_t>(buffer + at);
    at += sizeof(item.code);
    const std::size_t payload = _IOC_SIZE(item.code);
    if (at + payload > size) {
      *error = "truncated " + ReturnName(item.code);
      return returns;
    }
    switch (item.code) {
      case BR_TRANSACTION:
      case BR_REPLY:
        item.txn = Load<binder_transaction_data>(buffer + at);
        break;
      case BR_TRANSACTION_SEC_CTX: {
        auto with_label = Load<binder_transaction_data_secctx>(buffer + at);
        item.txn = with_label.transaction_data;
        item.secctx = with_label.secctx;
        break;
      }
      case BR_INCREFS:
      case BR_ACQUIRE:
      case BR_RELEASE:
      case BR_DECREFS:
        item.ptr_cookie = Load<binder_ptr_cookie>(buffer + at);
        break;
      case BR_DEAD_BINDER:
      case BR_CLEAR_DEATH_NOTIFICATION_DONE:
      case uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE:
        item.cookie = Load<binder_uintptr_t>(buffer + at);
        break;
      case uapi::BR_FROZEN_BINDER:
        item.frozen = Load<uapi::binder_frozen_state_info>(buffer + at);
        item.cookie = item.frozen.cookie;
        break;
      case BR_NOOP:
      case BR_SPAWN_LOOPER:
      case BR_TRANSACTION_COMPLETE:
      case BR_FAILED_REPLY:
      case BR_DEAD_REPLY:
      case BR_FROZEN_REPLY:
      case BR_ONEWAY_SPAM_SUSPECT:
      case uapi::BR_TRANSACTION_PENDING_FROZEN:
      case BR_ERROR:
        break;
      default:
        *error = "unexpected return code " + ReturnName(item.code);
        return returns;
    }
    at += payload;
    returns.push_back(item);
  }
  if (at != size) *error = "trailing bytes after the last return code";
  return returns;
}

std::string ReturnName(std::uint32_t code) {
  switch (code) {
#define CUSED_RETURN_NAME(name) \
  case name:                    \
    return #name;
    CUSED_RETURN_NAME(BR_ERROR)
    CUSED_RETURN_NAME(BR_OK)
    CUSED_RETURN_NAME(BR_TRANSACTION)
    CUSED_RETURN_NAME(BR_TRANSACTION_SEC_CTX)
    CUSED_RETURN_NAME(BR_REPLY)
    CUSED_RETURN_NAME(BR_DEAD_REPLY)
    CUSED_RETURN_NAME(BR_TRANSACTION_COMPLETE)
    CUSED_RETURN_NAME(BR_INCREFS)
    CUSED_RETURN_NAME(BR_ACQUIRE)
    CUSED_RETURN_NAME(BR_RELEASE)
    CUSED_RETURN_NAME(BR_DECREFS)
    CUSED_RETURN_NAME(BR_NOOP)
    CUSED_RETURN_NAME(BR_SPAWN_LOOPER)
    CUSED_RETURN_NAME(BR_DEAD_BINDER)
    CUSED_RETURN_NAME(BR_CLEAR_DEATH_NOTIFICATION_DONE)
    CUSED_RETURN_NAME(BR_FAILED_REPLY)
    CUSED_RETURN_NAME(BR_FROZEN_REPLY)
    CUSED_RETURN_NAME(BR_ONEWAY_SPAM_SUSPECT)
    CUSED_RETURN_NAME(uapi::BR_TRANSACTION_PENDING_FROZEN)
    CUSED_RETURN_NAME(uapi::BR_FROZEN_BINDER)
    CUSED_RETURN_NAME(uapi::BR_CLEAR_FREEZE_NOTIFICATION_DONE)
#undef CUSED_RETURN_NAME
  }
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%08x", code);
  return hex;
}

std::string Describe(const std::vector<Return>& returns) {
  std::string text;
  for (const Return& item : returns) text += (text.empty() ? "" : " ") + ReturnName(item.code);
  return "[" + text + "]";
}

std::vector<std::uint32_t> Codes(const std::vector<Return>& returns) {
  std::vector<std::uint32_t> codes;
  for (const Return& item : returns) codes.push_back(item.code);
  return codes;
}

}  // namespace cused::conformance

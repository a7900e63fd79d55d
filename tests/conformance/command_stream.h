// SPDX-License-Identifier: GPL-2.0-only
// The two byte streams of BINDER_WRITE_READ, for tests that speak raw binder: Commands builds a
// BC_ write buffer (owning every payload it points at), ParseReturns splits a read buffer into
// its BR_ items (spec S0.2/S0.3, S3).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "uapi/binder.h"

namespace cused::conformance {

// An object to embed in a transaction's data, at its offset in the offsets array.
struct EmbeddedObject {
  std::size_t offset;
  flat_binder_object object;
};

// Any object (a binder_buffer_object, a binder_fd_array_object ...) as raw bytes at its offset.
struct EmbeddedBytes {
  std::size_t offset;
  std::vector<std::byte> bytes;
  template <typename T>
  static EmbeddedBytes Of(std::size_t offset, const T& object) {
    const auto* first = reinterpret_cast<const std::byte*>(&object);
    return {offset, std::vector<std::byte>(first, first + sizeof(object))};
  }
};

class Commands {
 public:
  // A bare command word (BC_ENTER_LOOPER, or any code a test wants to send as is).
  Commands& code(std::uint32_t command);
  Commands& transaction(std::uint32_t handle, std::uint32_t code, std::string_view data,
                        std::uint32_t flags = 0, const std::vector<EmbeddedObject>& objects = {});
  Commands& reply(std::uint32_t code, std::string_view data, std::uint32_t flags = 0,
                  const std::vector<EmbeddedObject>& objects = {});
  // BC_TRANSACTION_SG / BC_REPLY_SG with objects of any type and `buffers_size` bytes of
  // scatter-gather space (S5.5).
  Commands& transaction_sg(std::uint32_t handle, std::uint32_t code, std::string_view data,
                           std::uint32_t flags, const std::vector<EmbeddedBytes>& objects,
                           binder_size_t buffers_size);
  Commands& reply_sg(std::uint32_t code, std::string_view data, std::uint32_t flags,
                     const std::vector<EmbeddedBytes>& objects, binder_size_t buffers_size);
  Commands& free_buffer(binder_uintptr_t buffer);
  // BC_INCREFS / BC_ACQUIRE / BC_RELEASE / BC_DECREFS.
  Commands& ref(std::uint32_t command, std::uint32_t handle);
  // BC_INCREFS_DONE / BC_ACQUIRE_DONE.
  Commands& ref_done(std::uint32_t command, binder_uintptr_t ptr, binder_uintptr_t cookie);
  // BC_REQUEST_DEATH_NOTIFICATION / BC_CLEAR_DEATH_NOTIFICATION.
  Commands& death(std::uint32_t command, std::uint32_t handle, binder_uintptr_t cookie);
  Commands& dead_binder_done(binder_uintptr_t cookie);

  // Any command with its payload copied as is (hand-made transactions, unsupported commands).
  Commands& with_payload(std::uint32_t command, const void* payload, std::size_t size);

  const std::byte* data() const { return bytes_.data(); }
  std::size_t size() const { return bytes_.size(); }

 private:
  Commands& transaction_data(std::uint32_t command, std::uint32_t handle, std::uint32_t code,
                             std::string_view data, std::uint32_t flags,
                             const std::vector<EmbeddedObject>& objects);
  // The binder_transaction_data of `data` with `objects` at their offsets (payloads kept).
  binder_transaction_data build(std::uint32_t handle, std::uint32_t code, std::string_view data,
                                std::uint32_t flags, const std::vector<EmbeddedBytes>& objects);
  Commands& sg(std::uint32_t command, const binder_transaction_data& txn,
               binder_size_t buffers_size);

  std::vector<std::byte> bytes_;
  // Transaction data and offsets arrays; a deque keeps them where the commands point.
  std::deque<std::vector<std::byte>> payloads_;
};

// One BR_ item: its code and whichever payload it carries.
struct Return {
  std::uint32_t code = 0;
  binder_transaction_data txn{};   // BR_TRANSACTION, BR_REPLY, BR_TRANSACTION_SEC_CTX
  binder_uintptr_t secctx = 0;     // BR_TRANSACTION_SEC_CTX: the sender's label in the buffer
  binder_ptr_cookie ptr_cookie{};  // BR_INCREFS, BR_ACQUIRE, BR_RELEASE, BR_DECREFS
  binder_uintptr_t cookie = 0;     // BR_DEAD_BINDER, BR_CLEAR_{DEATH,FREEZE}_NOTIFICATION_DONE
  uapi::binder_frozen_state_info frozen{};  // BR_FROZEN_BINDER

  // The transaction's data bytes, read from the receiver's mapping.
  std::string data() const;
  // The flat_binder_object at `offset` in the transaction's data.
  flat_binder_object object_at(std::size_t offset) const;
  // Any object at `offset` in the transaction's data (zeros where the data ends).
  template <typename T>
  T object_as(std::size_t offset) const {
    T object{};
    if (offset + sizeof(object) <= txn.data_size)
      std::memcpy(&object, reinterpret_cast<const std::byte*>(txn.data.ptr.buffer) + offset,
                  sizeof(object));
    return object;
  }
};

// Splits `size` bytes of a read buffer into items; on a code it does not know or a truncated
// payload, stops and says why in `error`.
std::vector<Return> ParseReturns(const std::byte* buffer, std::size_t size, std::string* error);

// "BR_TRANSACTION" etc., or the code in hex.
std::string ReturnName(std::uint32_t code);
// "BR_NOOP BR_TRANSACTION_COMPLETE ..." for failure messages.
std::string Describe(const std::vector<Return>& returns);
std::vector<std::uint32_t> Codes(const std::vector<Return>& returns);

}  // namespace cused::conformance

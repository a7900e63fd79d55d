// SPDX-License-Identifier: GPL-2.0-only
// A BR_ return stream (S3.2) as a read buffer holds it: each item is a 4-byte code followed by
// _IOC_SIZE(code) bytes of payload. Fuzzers and fault tests walk it to learn what to answer next.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <span>
#include <vector>

#include "uapi/binder.h"

namespace cused::client {

struct ReturnItem {
  std::uint32_t cmd = 0;
  std::span<const std::byte> payload;

  template <typename T>
  T as() const {
    T value{};
    std::memcpy(&value, payload.data(), std::min(sizeof value, payload.size()));
    return value;
  }
};

// Calls visit(item) for every item of `stream`; false when the last item is cut short.
template <typename Visit>
bool for_each_return(std::span<const std::byte> stream, Visit&& visit) {
  std::size_t pos = 0;
  while (pos + sizeof(std::uint32_t) <= stream.size()) {
    ReturnItem item;
    std::memcpy(&item.cmd, stream.data() + pos, sizeof item.cmd);
    pos += sizeof item.cmd;
    std::size_t len = _IOC_SIZE(item.cmd);
    if (len > stream.size() - pos) return false;
    item.payload = stream.subspan(pos, len);
    pos += len;
    visit(item);
  }
  return true;
}

// What a binder thread owes the driver after a read: buffers to free (S9.9), BR_INCREFS /
// BR_ACQUIRE to answer with their DONE (S6.5), deaths to acknowledge (S7.3), a call to reply to.
struct FollowUps {
  std::vector<binder_uintptr_t> buffers;
  std::deque<binder_ptr_cookie> increfs, acquires;
  std::deque<binder_uintptr_t> deaths;
  bool serving = false;  // a sync BR_TRANSACTION arrived: this thread must reply (S4.4)

  // Returns true for a delivered transaction or reply.
  bool record(const ReturnItem& item) {
    switch (item.cmd) {
      case BR_TRANSACTION:
      case BR_TRANSACTION_SEC_CTX:
      case BR_REPLY: {
        auto tr = item.as<binder_transaction_data>();
        buffers.push_back(tr.data.ptr.buffer);
        if (item.cmd != BR_REPLY && !(tr.flags & TF_ONE_WAY)) serving = true;
        return true;
      }
      case BR_INCREFS:
      case BR_ACQUIRE:
        (item.cmd == BR_INCREFS ? increfs : acquires).push_back(item.as<binder_ptr_cookie>());
        return false;
      case BR_DEAD_BINDER:
        deaths.push_back(item.as<binder_uintptr_t>());
        return false;
      default:
        return false;
    }
  }
};

}  // namespace cused::client

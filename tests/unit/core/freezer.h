// SPDX-License-Identifier: GPL-2.0-only
// The fixture of the freeze tests (freeze_test.cc: S2.10, S2.11, S4.13) and the freeze
// notification tests (freeze_notification_test.cc: S7.6-S7.9, S11.13).
#pragma once

#include <cstring>

#include "tests/unit/core/world.h"

namespace cused::core::test {

constexpr pid_t kFreezer = 400, kFreezerMain = 401;
constexpr binder_uintptr_t kCookie = 0xf00d;

// A World with a fourth proc that freezes the others (BINDER_FREEZE, BINDER_GET_FROZEN_INFO).
class FreezeWorld : public World {
 protected:
  void SetUp() override {
    World::SetUp();
    warm(freezer, kFreezerMain);
  }

  long freeze(pid_t pid, bool enable, std::uint32_t timeout_ms = 0) {
    binder_freeze_info info{static_cast<__u32>(pid), enable ? 1u : 0u, timeout_ms};
    return freezer.ioctl(kFreezerMain, BINDER_FREEZE, info);
  }
  Call freeze_async(pid_t pid, std::uint32_t timeout_ms) {
    binder_freeze_info info{static_cast<__u32>(pid), 1, timeout_ms};
    return freezer.ioctl_async(kFreezerMain, BINDER_FREEZE, info);
  }
  binder_frozen_status_info frozen_info(pid_t pid, long expect = 0) {
    binder_frozen_status_info info{static_cast<__u32>(pid), 0xff, 0xff};
    EXPECT_EQ(freezer.ioctl(kFreezerMain, BINDER_GET_FROZEN_INFO, info), expect);
    return info;
  }
  // The client sends a oneway with `code`, `flags` and one u32 `value` to its handle.
  Call oneway(std::uint32_t handle, std::uint32_t code, std::uint32_t flags, std::uint32_t value) {
    return client.write_read(
        kClientMain, Commands().transaction(handle, code, TF_ONE_WAY | flags, Parcel().u32(value)));
  }
  static uapi::binder_frozen_state_info frozen_state(const Call& call) {
    uapi::binder_frozen_state_info state{};
    for (const Br& item : call.items()) {
      if (item.cmd == uapi::BR_FROZEN_BINDER)
        std::memcpy(&state, item.payload.data(), sizeof state);
    }
    return state;
  }
  // The client's handle to the server's object.
  std::uint32_t server_handle() { return fetch(publish()); }

  Client freezer{env, kFreezer};
};

}  // namespace cused::core::test

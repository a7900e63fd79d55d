// SPDX-License-Identifier: GPL-2.0-only
// What most conformance tests start from (docs/conformance.md): recognisable codes and object
// identities, the flat objects they send, and the registration of a server's object with the
// context manager (S3.5, S5.1, S6.5, S6.6), from both sides.
#pragma once

#include <cstdint>
#include <string_view>

#include "tests/conformance/command_stream.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/scenario.h"
#include "uapi/binder.h"

namespace cused::conformance {

// Arbitrary but recognisable codes and object identities (kCallCode, kRegisterCode: scenario.h).
inline constexpr std::uint32_t kReplyCode = 0x5f52504c;
inline constexpr binder_uintptr_t kObjectPtr = 0x7000100;
inline constexpr binder_uintptr_t kObjectCookie = 0x7000200;
inline constexpr binder_uintptr_t kDeathCookie = 0xdeadc0;

// A local object (BINDER_TYPE_BINDER) that accepts fds.
flat_binder_object LocalBinder(binder_uintptr_t ptr, binder_uintptr_t cookie);
// An fd to pass (S5.3): binder_fd_object has flat_binder_object's layout, the fd at byte 8.
flat_binder_object FdObject(int fd);
// Frees `txn`'s buffer and replies; the replier's next read is BR_NOOP, BR_TRANSACTION_COMPLETE.
void FreeAndReply(const Endpoint& endpoint, const Return& txn, std::string_view data,
                  Commands before = {});
// The owner's side of sending its object to the context manager in a sync call: the driver asks
// it for a weak and a strong reference before the completion (S3.5, S6.5); it acknowledges both
// (S6.6) and frees the reply.
void RegisterObjectWithManager(const Endpoint& owner, binder_uintptr_t ptr,
                               binder_uintptr_t cookie);
// The manager's side: the registration arrives with the object rewritten to a handle (S5.1),
// whose number is returned.
std::uint32_t ReceiveRegisteredHandle(const Endpoint& manager, Return& txn);

}  // namespace cused::conformance

// SPDX-License-Identifier: GPL-2.0-only
// Scaffolding shared by the conformance tests: the context manager every scenario starts from,
// and the common two-process shape (a manager, and one process that talks to it).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"

namespace cused::conformance {

// Arbitrary but recognisable transaction codes.
constexpr std::uint32_t kCallCode = 0x5f434c4c;
constexpr std::uint32_t kRegisterCode = 0x5f524547;

// A context manager on DevicePath() that has entered its looper (as servicemanager does) and is
// ready for work.
Endpoint ContextManager();

// Forks the context manager, which becomes ready (ContextManager()) and runs `manager`, and a
// client, which waits for it, opens the device and runs `client`; both must pass (the client is
// reaped first).
void ManagerAndClient(const std::function<void(const Endpoint&)>& manager,
                      const std::function<void(const Endpoint&)>& client);

// ManagerAndClient with a manager that must receive nothing: once `sent` arrives (the client
// sends it when it is done), it has nothing to read, else it fails with `delivered`.
void ManagerReceivesNothing(const Channel& sent, const char* delivered,
                            const std::function<void(const Endpoint&)>& client);

// Waits for one incoming transaction: a read that is exactly BR_NOOP, BR_TRANSACTION (S3.6).
::testing::AssertionResult ReceiveTransaction(const Endpoint& endpoint, Return& txn);

// The caller's side of a call to the manager whose reply fails (S3.6): its deferred completion,
// then `failure`, in one read or two.
void CallAndExpectFailureAfterCompletion(const Endpoint& caller, std::string_view data,
                                         std::uint32_t failure);

}  // namespace cused::conformance

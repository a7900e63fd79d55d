// SPDX-License-Identifier: GPL-2.0-only
// One binder proc of a conformance test: the device opened and mapped by the calling process,
// with BINDER_WRITE_READ split into its write half and a bounded read half (poll() with a
// timeout first, so a driver that never answers fails the test instead of hanging it).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "client/binder_device.h"
#include "tests/conformance/command_stream.h"

namespace cused::conformance {

// How long a test waits for something the driver must deliver (TCG guests are slow).
inline constexpr int kDeliveryTimeoutMs = 5000;
// How long a test watches for something the driver must NOT deliver.
inline constexpr int kQuietMs = 300;

class Endpoint {
 public:
  // Opens and maps `path`, then issues BINDER_VERSION so the thread's first-ioctl
  // looper_need_return (S2.0) is spent before the test's own reads. Throws if open fails.
  explicit Endpoint(const std::string& path);

  const client::BinderDevice& device() const { return device_; }
  int fd() const { return device_.fd(); }

  // The write half only: 0 or -errno; `consumed` gets write_consumed (also on failure).
  int write(const Commands& commands, binder_size_t* consumed = nullptr) const;
  // Room for BR_NOOP plus several items: the driver stops filling when fewer than 76 bytes
  // remain (S3.2), so this holds a handful of small items and one transaction.
  static constexpr std::size_t kReadBufferSize = 512;

  // Waits up to `timeout_ms` for the fd to poll readable, then reads once, offering `read_size`
  // (at most kReadBufferSize) bytes, into `out`.
  ::testing::AssertionResult read(std::vector<Return>& out, int timeout_ms = kDeliveryTimeoutMs,
                                  std::size_t read_size = kReadBufferSize) const;
  // Reads until an item with code `last` arrives; `out` gets every item but BR_NOOP, in order.
  ::testing::AssertionResult read_until(std::uint32_t last, std::vector<Return>& out) const;
  // True when nothing becomes readable within `ms`.
  bool quiet_for(int ms = kQuietMs) const;

  // BINDER_SET_CONTEXT_MGR, retrying EBUSY for a while: the previous test's manager is released
  // by a deferred worker after its process exits (S1.9), so the slot frees up asynchronously.
  // With `node`: BINDER_SET_CONTEXT_MGR_EXT and that object's flags (S2.4).
  ::testing::AssertionResult become_context_manager(const flat_binder_object* node = nullptr) const;
  // BINDER_GET_EXTENDED_ERROR (S2.14) of the calling thread.
  binder_extended_error extended_error() const;

 private:
  client::BinderDevice device_;
};

// Expects `returns` to be exactly `codes`, naming what came instead.
::testing::AssertionResult HasCodes(const std::vector<Return>& returns,
                                    const std::vector<std::uint32_t>& codes);

}  // namespace cused::conformance

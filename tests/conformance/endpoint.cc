// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/endpoint.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace cused::conformance {

Endpoint::Endpoint(const std::string& path) : device_(path) {
  if (int result = device_.map(); result < 0)
    ADD_FAILURE() << "mmap " << path << ": " << std::strerror(-result);
  if (int version = device_.version(); version < 0)
    ADD_FAILURE() << "BINDER_VERSION: " << std::strerror(-version);
}

int Endpoint::write(const Commands& commands, binder_size_t* consumed) const {
  binder_write_read bwr{};
  bwr.write_size = commands.size();
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(commands.data());
  int result = device_.write_read(bwr);
  if (consumed) *consumed = bwr.write_consumed;
  return result < 0 ? result : 0;
}

::testing::AssertionResult Endpoint::read(std::vector<Return>& out, int timeout_ms,
                                          std::size_t read_size) const {
  pollfd readable{fd(), POLLIN, 0};
  int ready = ::poll(&readable, 1, timeout_ms);
  if (ready < 0) return ::testing::AssertionFailure() << "poll: " << std::strerror(errno);
  if (ready == 0)
    return ::testing::AssertionFailure() << "nothing to read after " << timeout_ms << " ms";
  alignas(8) std::byte buffer[kReadBufferSize];
  binder_write_read bwr{};
  bwr.read_size = std::min(read_size, sizeof(buffer));
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(buffer);
  if (int result = device_.write_read(bwr); result < 0)
    return ::testing::AssertionFailure() << "BINDER_WRITE_READ read: " << std::strerror(-result);
  std::string error;
  out = ParseReturns(buffer, bwr.read_consumed, &error);
  if (std::getenv("CONFORMANCE_TRACE"))
    std::printf("pid %d read %s\n", ::getpid(), Describe(out).c_str());
  if (!error.empty()) return ::testing::AssertionFailure() << error << " after " << Describe(out);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Endpoint::read_until(std::uint32_t last,
                                                std::vector<Return>& out) const {
  out.clear();
  for (;;) {
    std::vector<Return> batch;
    if (auto result = read(batch); !result)
      return result << " (waiting for " << ReturnName(last) << ", got " << Describe(out) << ")";
    for (const Return& item : batch) {
      if (item.code == BR_NOOP) continue;
      out.push_back(item);
      if (item.code == last) return ::testing::AssertionSuccess();
    }
  }
}

bool Endpoint::quiet_for(int ms) const {
  pollfd readable{fd(), POLLIN, 0};
  return ::poll(&readable, 1, ms) == 0;
}

::testing::AssertionResult Endpoint::become_context_manager(const flat_binder_object* node) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (;;) {
    std::int32_t unused = 0;
    flat_binder_object object = node ? *node : flat_binder_object{};
    int result = node ? device_.ioctl(BINDER_SET_CONTEXT_MGR_EXT, &object)
                      : device_.ioctl(BINDER_SET_CONTEXT_MGR, &unused);
    if (result == 0) return ::testing::AssertionSuccess();
    if (result != -EBUSY || std::chrono::steady_clock::now() > deadline)
      return ::testing::AssertionFailure() << "BINDER_SET_CONTEXT_MGR: " << std::strerror(-result);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

binder_extended_error Endpoint::extended_error() const {
  binder_extended_error error{};
  if (int result = device_.ioctl(BINDER_GET_EXTENDED_ERROR, &error); result < 0)
    ADD_FAILURE() << "BINDER_GET_EXTENDED_ERROR: " << std::strerror(-result);
  return error;
}

::testing::AssertionResult HasCodes(const std::vector<Return>& returns,
                                    const std::vector<std::uint32_t>& codes) {
  if (Codes(returns) == codes) return ::testing::AssertionSuccess();
  std::vector<Return> expected;
  for (std::uint32_t code : codes) expected.push_back(Return{.code = code});
  return ::testing::AssertionFailure()
         << "got " << Describe(returns) << ", expected " << Describe(expected);
}

}  // namespace cused::conformance

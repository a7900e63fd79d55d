// SPDX-License-Identifier: GPL-2.0-only
// The shrinker's thread (cused/host/shrinker_thread.h) and what wakes it: shrink-now requests,
// stress mode and pressure sources. The policy it runs is tests/unit/alloc's (shrinker_test.cc);
// the daemon's sources (PSI, cgroup v2) are memory_pressure_test.cc's.
#include "cused/host/shrinker_thread.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "tests/unit/alloc/fixture.h"

namespace cused::host {
namespace {

using core::alloc::LockVariant;
using core::alloc::PageLru;
using core::alloc::ReclaimResult;
using core::alloc::ShrinkerStats;
using core::alloc::testing::TestProc;

// Waits (with a hang guard, not a timing assertion) until `done` holds.
template <typename F>
bool eventually(F&& done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A pressure source a test can fire: readable pipe = pressure.
class PipeSource final : public PressureSource {
 public:
  PipeSource() {
    if (pipe(fds_) != 0) throw std::runtime_error("pipe");
  }
  ~PipeSource() override {
    close(fds_[0]);
    close(fds_[1]);
  }
  std::string_view name() const override { return "test-pipe"; }
  int fd() const override { return fds_[0]; }
  short events() const override { return POLLIN; }
  bool consume() override {
    char byte;
    return read(fds_[0], &byte, 1) == 1;
  }
  void fire() { ASSERT_EQ(write(fds_[1], "x", 1), 1); }

 private:
  int fds_[2];
};

class ShrinkerThreadTest : public ::testing::Test {
 protected:
  std::size_t page() const { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  // Puts `pages` pages of `proc` on the LRU.
  void park_pages(TestProc& proc, std::size_t pages) {
    proc.alloc->free_buffer(*proc.sync_buffer(pages * page()));
  }
  PageLru lru;
};

TEST_F(ShrinkerThreadTest, ShrinkNowReclaimsOnTheThreadAndReturnsTheResult) {
  TestProc one(lru, {}, 1 << 20), two(lru, {LockVariant::named("spin-install")}, 1 << 20);
  park_pages(one, 3);
  park_pages(two, 5);
  ShrinkerThread shrinker(lru);
  ReclaimResult result = shrinker.shrink_now();
  EXPECT_EQ(result.pages, 8u);
  EXPECT_EQ(result.bytes, 8 * page());
  EXPECT_EQ(lru.size(), 0u);
  ShrinkerStats stats = shrinker.stats();
  EXPECT_EQ(stats.requests, 1u);
  EXPECT_EQ(stats.pages, 8u);
  EXPECT_EQ(shrinker.shrink_now().pages, 0u);  // nothing left
}

TEST_F(ShrinkerThreadTest, StressModeReclaimsWithoutBeingAsked) {
  TestProc proc(lru, {}, 1 << 20);
  ShrinkerOptions options;
  options.stress = true;
  ShrinkerThread shrinker(lru, std::move(options));
  park_pages(proc, 6);
  EXPECT_TRUE(eventually([&] { return proc.file->resident_pages(0, 1 << 20) == 0; }));
  EXPECT_TRUE(shrinker.stats().stress);
  shrinker.set_stress(false);
  EXPECT_FALSE(shrinker.stats().stress);
}

TEST_F(ShrinkerThreadTest, APressureEventReclaims) {
  TestProc proc(lru, {}, 1 << 20);
  park_pages(proc, 2);
  auto source = std::make_unique<PipeSource>();
  PipeSource& pipe_source = *source;
  ShrinkerOptions options;
  options.sources.push_back(std::move(source));
  ShrinkerThread shrinker(lru, std::move(options));
  EXPECT_EQ(shrinker.stats().sources, std::vector<std::string>{"test-pipe"});
  EXPECT_EQ(lru.size(), 2u);  // nothing happens without pressure
  pipe_source.fire();
  EXPECT_TRUE(eventually([&] { return shrinker.stats().pressure_events == 1; }));
  EXPECT_EQ(shrinker.stats().pages, 2u);
  EXPECT_EQ(proc.file->resident_pages(0, 1 << 20), 0);
}

}  // namespace
}  // namespace cused::host

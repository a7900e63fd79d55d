// SPDX-License-Identifier: GPL-2.0-only
// S11.10, deterministically: the shrinker is stopped (test hook) after it isolated an LRU page
// and before it punches it; meanwhile a new buffer reuses that page and gets written. Under
// `spin` (racy on purpose) the punch then lands on the live buffer and its bytes are gone; every
// other design makes the allocation wait for the punch and install a fresh page, so the bytes
// survive.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

constexpr std::byte kPayload{0xc5};

// The system call thread `tid` of this process is in ("running" when none).
std::string current_syscall(pid_t tid) {
  std::ifstream file("/proc/self/task/" + std::to_string(tid) + "/syscall");
  std::string number;
  file >> number;
  return number;
}

// Whether thread `tid` sits in a futex wait: how a thread blocked on one of core/sync's mutexes
// looks from outside (Mutex::lock_slow sleeps in FUTEX_WAIT).
bool blocked_in_futex(pid_t tid) { return current_syscall(tid) == std::to_string(SYS_futex); }

// Polls `ready` (with a hang guard, not a timing assertion).
template <typename F>
void wait_until(F&& ready) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ADD_FAILURE() << "timed out waiting for the other thread";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Whether thread `tid` stays in a futex wait over `polls` looks a millisecond apart: asleep on a
// lock, not passing through one of the allocator's or the C library's short waits on the way.
bool asleep_in_futex(pid_t tid, int polls = 20) {
  for (int i = 0; i < polls; ++i) {
    if (!blocked_in_futex(tid)) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

pid_t gettid_now() { return static_cast<pid_t>(syscall(SYS_gettid)); }

struct RaceOutcome {
  bool payload_intact = false;
  long resident_pages = 0;
  PageState page_state = PageState::free;
  std::uint64_t reclaim_conflicts = 0;
};

RaceOutcome race_reclaim_against_reuse(Variant variant) {
  PageLru lru;
  TestProc proc(lru, variant, 16 * 4096);
  const std::size_t page = proc.alloc->page_size();
  // Page 0: installed, unused, on the LRU.
  proc.alloc->free_buffer(*proc.sync_buffer(page));

  std::promise<void> isolated, resume;
  std::shared_future<void> resumed = resume.get_future().share();
  lru.set_reclaim_hook([&](const ReclaimPoint& point) {
    EXPECT_EQ(point.page_index, 0u);
    isolated.set_value();
    resumed.wait();
  });
  std::thread shrinker([&] { lru.reclaim(); });
  isolated.get_future().wait();

  std::atomic<pid_t> writer_tid{0};
  std::atomic<Buffer*> written{nullptr};
  std::thread writer([&] {
    writer_tid = gettid_now();
    Buffer* buffer = proc.sync_buffer(page);  // best fit: offset 0, page 0
    auto bytes = proc.alloc->contents(*buffer);
    std::fill(bytes.begin(), bytes.end(), kPayload);
    written = buffer;
  });
  // Release the shrinker once the writer has either written (it did not wait for the shrinker)
  // or is asleep on a lock the shrinker holds. The deadline only guards against a hang.
  wait_until([&] { return written || (writer_tid && blocked_in_futex(writer_tid)); });
  resume.set_value();
  shrinker.join();
  writer.join();

  RaceOutcome outcome;
  Buffer* buffer = written.load();
  EXPECT_EQ(buffer->offset(), 0u);
  // Before reading it: a read of a punched page faults a fresh zero page back in.
  outcome.resident_pages = proc.file->resident_pages(0, page);
  auto bytes = proc.alloc->contents(*buffer);
  outcome.payload_intact =
      std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == kPayload; });
  outcome.page_state = proc.alloc->page_state(0);
  outcome.reclaim_conflicts = proc.alloc->stats().reclaim_conflicts;
  return outcome;
}

class ReclaimRaceTest : public ::testing::TestWithParam<Variant> {};

TEST_P(ReclaimRaceTest, S11_10_ReuseOfAnIsolatedPageDuringReclaim) {
  RaceOutcome outcome = race_reclaim_against_reuse(GetParam());
  // The allocator believes the page belongs to the live buffer in every variant.
  EXPECT_EQ(outcome.page_state, PageState::active);
  if (racy_on_purpose(GetParam())) {
    // The bug the spin design has: the buffer is live, its page was punched under it.
    EXPECT_FALSE(outcome.payload_intact);
    EXPECT_EQ(outcome.resident_pages, 0);
  } else {
    EXPECT_TRUE(outcome.payload_intact);
    EXPECT_EQ(outcome.resident_pages, 1);
  }
  // spin-install got there by rolling back, waiting for the shrinker and retrying; a design whose
  // shrinker holds the metadata lock across the punch never meets the isolated page.
  EXPECT_EQ(outcome.reclaim_conflicts,
            GetParam().lock == LockVariant::named("spin-install") ? 1u : 0u);
}

// S1.9 step 8 against a reclaim in flight: the proc goes away while the shrinker is between
// isolating one of its pages and punching it. Teardown must wait for the punch (the spin
// variant holds no allocator lock there at all); if it did not, the shrinker would punch
// through a freed allocator and a closed memfd, which the ASan build reports.
TEST_P(ReclaimRaceTest, S1_9_TeardownWaitsForAReclaimInFlight) {
  PageLru lru;
  auto proc = std::make_unique<TestProc>(lru, GetParam(), 16 * 4096);
  proc->alloc->free_buffer(*proc->sync_buffer(2 * proc->alloc->page_size()));
  std::promise<void> isolated, resume;
  std::shared_future<void> resumed = resume.get_future().share();
  std::atomic<bool> first{true};
  lru.set_reclaim_hook([&](const ReclaimPoint&) {
    if (!first.exchange(false)) return;  // stop on the first page only
    isolated.set_value();
    resumed.wait();
  });
  ReclaimResult result;
  std::thread shrinker([&] { result = lru.reclaim(); });
  isolated.get_future().wait();

  std::atomic<pid_t> tid{0};
  std::atomic<bool> gone{false};
  std::thread teardown([&] {
    tid = gettid_now();
    proc.reset();  // release(), then the memfd is closed
    gone = true;
  });
  // Resume once teardown has finished (the bug) or sleeps: on the allocator's mutex (mutex
  // variant) or until the reclaim in flight is done (a kernel design's file has released the
  // proc by then, as the kernel's does while its shrinker holds a page it isolated: the page,
  // and the mm it is accounted to, must outlive that release).
  wait_until([&] { return gone || (tid && asleep_in_futex(tid)); });
  EXPECT_FALSE(gone) << "the allocator went away under a reclaim";
  resume.set_value();
  shrinker.join();
  teardown.join();
  EXPECT_TRUE(gone);
  EXPECT_EQ(lru.size(), 0u);
  // The stopped page, and the other one too if the shrinker got to it before teardown took it
  // off the LRU.
  EXPECT_GE(result.pages, 1u);
}

INSTANTIATE_TEST_SUITE_P(Variants, ReclaimRaceTest, ::testing::ValuesIn(all_variants()),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace cused::core::alloc::testing

// SPDX-License-Identifier: GPL-2.0-only
// cused's own events (docs/tracing.md "cused's own events"): the cused_lock_* events of the
// allocator's locks and of the engine's proc, node and context locks, in order for a waiter, with
// the holder it waited behind, the prios and the holder's preemptions, and which holds are
// emitted; the page installs, reclaims and shrinker passes with their durations. The text of each
// event is tests/unit/host/ftrace_text_test.cc's.
#include "core/trace_events.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/alloc/alloc_lock.h"
#include "core/alloc/install_lock.h"
#include "core/alloc/kernel/kernel_allocator.h"
#include "core/alloc/kernel/kernel_runtime.h"
#include "core/alloc/shrinker.h"
#include "core/lock_trace.h"
#include "core/locks.h"
#include "core/sync/preemption.h"
#include "core/sync/thread_annotations.h"
#include "core/trace_event_names.h"
#include "tests/unit/alloc/fixture.h"

namespace cused::core::alloc::testing {
namespace {

using namespace std::chrono_literals;

constexpr pid_t kHolder = 1001;
constexpr pid_t kWaiter = 1002;
constexpr int kHolderPrio = 139;  // nice 19
constexpr int kWaiterPrio = 89;   // SCHED_FIFO 10

// What the sink reports as the calling thread's involuntary context switches: a test stands in
// for the scheduler preempting a holder by counting them up.
thread_local std::uint64_t t_preemptions = 0;

// Keeps every event; installed for the test's life.
class RecordingSink : public TraceSink {
 public:
  RecordingSink() { trace::set_sink(this); }
  ~RecordingSink() { trace::set_sink(nullptr); }

  void record(const TraceEvent& event) override {
    std::lock_guard guard(mutex_);
    events_.push_back(event);
  }
  std::vector<TraceEvent> events() const {
    std::lock_guard guard(mutex_);
    return events_;
  }
  std::vector<TraceEvent> of_task(pid_t tid) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& event : events())
      if (event.task.tid == tid) out.push_back(event);
    return out;
  }
  std::vector<TraceEvent> of_type(TraceEventType type) const {
    std::vector<TraceEvent> out;
    for (const TraceEvent& event : events())
      if (event.type == type) out.push_back(event);
    return out;
  }
  bool has(TraceEventType type) const { return !of_type(type).empty(); }
  int task_prio(pid_t tid) override {
    return tid == kHolder ? kHolderPrio : tid == kWaiter ? kWaiterPrio : -1;
  }
  std::uint64_t involuntary_switches() override { return t_preemptions; }

 private:
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
};

std::vector<TraceEventType> types(const std::vector<TraceEvent>& events) {
  std::vector<TraceEventType> out;
  for (const TraceEvent& event : events) out.push_back(event.type);
  return out;
}

// The holder (this thread, as client kHolder) takes a lock with `hold` and keeps it until the
// waiter (client kWaiter), which runs `wait`, has emitted cused_lock_contended, so the waiter's
// first try always fails; then 1 ms more, a hold long enough to be emitted uncontended, and lets
// go with `release`.
template <typename Hold, typename Wait, typename Release>
void contend_with(RecordingSink& sink, Hold hold, Wait wait, Release release) {
  trace::TaskScope task({kHolder, kHolder});
  hold();
  std::thread waiter([&] {
    trace::TaskScope task({kWaiter, kWaiter});
    wait();
  });
  while (!sink.has(TraceEventType::kLockContended)) std::this_thread::yield();
  std::this_thread::sleep_for(1ms);
  release();
  waiter.join();
}

// The hold and its release are two lambdas, which clang's analysis cannot pair: it is off in
// them (the lock type's own annotations are what the allocator's code is checked against).
template <typename Lock>
void contend(Lock& lock, RecordingSink& sink) {
  contend_with(
      sink, [&]() CUSED_NO_THREAD_SAFETY_ANALYSIS { lock.lock(); },
      [&] {
        lock.lock();
        lock.unlock();
      },
      [&]() CUSED_NO_THREAD_SAFETY_ANALYSIS { lock.unlock(); });
}

// The two kinds of metadata lock the designs use (core/alloc/alloc_lock.h), each carrying the
// trace id of the design that built it.
template <typename Lock>
class LockTraceTest : public ::testing::Test {};
using MetadataLocks = ::testing::Types<SleepingAllocLock, AllocSpinLock>;
TYPED_TEST_SUITE(LockTraceTest, MetadataLocks);

TYPED_TEST(LockTraceTest, TheWaiterSeesContendedThenAcquiredAfterItsWaitThenReleased) {
  constexpr std::uint8_t kDesign = 5;
  constexpr bool kSleeping = std::is_same_v<TypeParam, SleepingAllocLock>;
  RecordingSink sink;
  TypeParam lock(sync::LockPolicy::kBarging, kDesign);
  contend(lock, sink);
  const std::vector<TraceEvent> waiter = sink.of_task(kWaiter);
  ASSERT_EQ(types(waiter),
            (std::vector{TraceEventType::kLockContended, TraceEventType::kLockAcquired,
                         TraceEventType::kLockReleased}));
  EXPECT_GT(waiter[1].fields[3], 0u) << "wait ns";
  EXPECT_LE(waiter[0].time, waiter[1].time);
  EXPECT_LE(waiter[1].time, waiter[2].time);
  for (const TraceEvent& event : waiter) {
    EXPECT_EQ(event.fields[0], static_cast<std::uint64_t>(TracedLock::alloc));
    EXPECT_EQ(event.fields[1], kDesign);
    EXPECT_EQ(event.fields[2],
              kSleeping ? static_cast<std::uint64_t>(sync::LockPolicy::kBarging) : kNoLockPolicy);
  }
  // The holder was not contended; its hold of 1 ms and more is past kLongHold.
  const std::vector<TraceEvent> holder = sink.of_task(kHolder);
  ASSERT_EQ(types(holder), std::vector{TraceEventType::kLockReleased});
  EXPECT_GE(holder[0].fields[3], std::chrono::nanoseconds(1ms).count()) << "hold ns";
}

TEST(LockTrace, TheInstallLockIsNamedWithItsPolicy) {
  RecordingSink sink;
  InstallLock lock(sync::LockPolicy::kHandoff, find_design("spin-install")->trace_id);
  contend(lock, sink);
  const std::vector<TraceEvent> waiter = sink.of_task(kWaiter);
  ASSERT_EQ(waiter.size(), 3u);
  EXPECT_EQ(waiter[1].type, TraceEventType::kLockAcquired);
  EXPECT_EQ(waiter[1].fields[0], static_cast<std::uint64_t>(TracedLock::alloc_install));
  EXPECT_EQ(waiter[1].fields[2], static_cast<std::uint64_t>(sync::LockPolicy::kHandoff));
}

// Issue 32 point 2: whom a waiter waited behind. The waiter's contended names the holder's task
// and prio, its acquired its own prio; the holder's release its prio.
TEST(LockTrace, TheWaiterNamesItsHolderAndEachSidesPrio) {
  RecordingSink sink;
  SleepingAllocLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign);
  contend(lock, sink);
  const std::vector<TraceEvent> waiter = sink.of_task(kWaiter);
  ASSERT_EQ(waiter.size(), 3u);
  EXPECT_EQ(waiter[0].fields[3], static_cast<std::uint64_t>(kHolder)) << "holder";
  EXPECT_EQ(waiter[0].fields[4], static_cast<std::uint64_t>(kHolderPrio)) << "holder_prio";
  EXPECT_EQ(waiter[1].fields[4], static_cast<std::uint64_t>(kWaiterPrio)) << "prio";
  EXPECT_EQ(waiter[2].fields[4], static_cast<std::uint64_t>(kWaiterPrio)) << "prio";
  const std::vector<TraceEvent> holder = sink.of_task(kHolder);
  ASSERT_EQ(holder.size(), 1u);
  EXPECT_EQ(holder[0].fields[4], static_cast<std::uint64_t>(kHolderPrio));
}

// Issue 32 point 2: a holder preempted in its hold (getrusage's ru_nivcsw on the host) says how
// often; switches before the hold or after it are not counted.
TEST(LockTrace, AReleaseCountsItsHoldersPreemptionsInTheHold) {
  RecordingSink sink;
  SleepingAllocLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign);
  trace::TaskScope task({kHolder, kHolder});
  t_preemptions += 5;
  lock.lock();
  t_preemptions += 3;
  std::this_thread::sleep_for(2 * LockTrace::kLongHold);
  lock.unlock();
  t_preemptions += 7;
  const std::vector<TraceEvent> events = sink.events();
  ASSERT_EQ(types(events), std::vector{TraceEventType::kLockReleased});
  EXPECT_EQ(events[0].fields[5], 3u) << "nivcsw";
}

// Issue 47 point 1: a spinlock's holder leaves its unpreemptible section after the release
// (core/alloc/alloc_lock.h), and a holder serving a nice-19 caller is then often preempted at
// once. That switch is not in the hold: a stand-in control counts switches where the host's
// sched_setattr calls would be, before the lock is taken and after it is released, and the hold
// counts only those between.
class SwitchingControl final : public sync::PreemptionControl {
 public:
  void disable() override { t_preemptions += 2; }
  void enable() override { t_preemptions += 4; }
};

TEST(LockTrace, ASpinlockHoldCountsNoSwitchOfItsSectionsEntryOrExit) {
  RecordingSink sink;
  SwitchingControl control;
  sync::thread_preemption_control() = &control;
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign + 1);
  trace::TaskScope task({kHolder, kHolder});
  lock.lock();
  t_preemptions += 1;
  lock.unlock();
  sync::thread_preemption_control() = nullptr;
  const std::vector<TraceEvent> events = sink.events();
  ASSERT_EQ(types(events), std::vector{TraceEventType::kLockReleased});
  EXPECT_EQ(events[0].fields[5], 1u) << "nivcsw";
}

// A spinlock's every hold is emitted, short and uncontended too: the share of its holds that were
// preempted is of all of them (docs/tracing.md).
TEST(LockTrace, EveryHoldOfASpinlockIsEmitted) {
  RecordingSink sink;
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign + 1);
  for (int i = 0; i < 100; ++i) {
    lock.lock();
    lock.unlock();
  }
  const std::vector<TraceEvent> events = sink.events();
  ASSERT_EQ(events.size(), 100u);
  for (const TraceEvent& event : events) {
    EXPECT_EQ(event.type, TraceEventType::kLockReleased);
    EXPECT_EQ(event.fields[2], kNoLockPolicy);
  }
}

// Issue 32 point 2: the engine's proc, node and context locks (core/locks.h) emit the same events
// under the kernel lock's name, with their lock_policy= and the sleeping design.
template <typename Lock>
void expect_traced_as(TracedLock name) {
  RecordingSink sink;
  Lock lock(sync::LockPolicy::kHandoff);
  contend(lock, sink);
  const std::vector<TraceEvent> waiter = sink.of_task(kWaiter);
  ASSERT_EQ(types(waiter),
            (std::vector{TraceEventType::kLockContended, TraceEventType::kLockAcquired,
                         TraceEventType::kLockReleased}));
  for (const TraceEvent& event : waiter) {
    EXPECT_EQ(event.fields[0], static_cast<std::uint64_t>(name));
    EXPECT_EQ(event.fields[1], kSleepingLockDesign);
    EXPECT_EQ(event.fields[2], static_cast<std::uint64_t>(sync::LockPolicy::kHandoff));
  }
  EXPECT_EQ(waiter[0].fields[3], static_cast<std::uint64_t>(kHolder));
}

TEST(LockTrace, TheEngineLocksAreNamedForTheKernelsLocks) {
  expect_traced_as<InnerLock>(TracedLock::proc_inner);
  expect_traced_as<OuterLock>(TracedLock::proc_outer);
  expect_traced_as<NodeLock>(TracedLock::node);
  expect_traced_as<ContextLock>(TracedLock::context);
}

// The common case, an uncontended short hold, fills no ring.
TEST(LockTrace, AShortUncontendedHoldEmitsNothing) {
  RecordingSink sink;
  SleepingAllocLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign);
  for (int i = 0; i < 100; ++i) {
    lock.lock();
    lock.unlock();
  }
  // A hold the scheduler stretched past kLongHold (a loaded machine switches this thread out) is
  // long and emitted, rightly; no hold shorter than that is.
  for (const TraceEvent& event : sink.events()) {
    EXPECT_EQ(event.type, TraceEventType::kLockReleased);
    EXPECT_GE(event.fields[3], std::chrono::nanoseconds(LockTrace::kLongHold).count());
  }
}

// A failed try_lock (the shrinker's) waits for nothing: only the holder's long hold is emitted.
TEST(LockTrace, AFailedTryLockIsNotContention) {
  RecordingSink sink;
  SleepingAllocLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign);
  lock.lock();
  std::thread([&] { EXPECT_FALSE(lock.try_lock()); }).join();
  std::this_thread::sleep_for(2 * LockTrace::kLongHold);
  lock.unlock();
  EXPECT_EQ(types(sink.events()), std::vector{TraceEventType::kLockReleased});
}

// Takes `lock` with try_lock (as the shrinker does) and keeps it for `hold`; false if it was taken.
template <typename Lock>
bool hold_after_try_lock(Lock& lock, std::chrono::microseconds hold) {
  if (!lock.try_lock()) return false;
  std::this_thread::sleep_for(hold);
  lock.unlock();
  return true;
}

TEST(LockTrace, ALongUncontendedHoldEmitsItsRelease) {
  RecordingSink sink;
  AllocSpinLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign + 1);
  ASSERT_TRUE(hold_after_try_lock(lock, 2 * LockTrace::kLongHold));
  const std::vector<TraceEvent> events = sink.events();
  ASSERT_EQ(types(events), std::vector{TraceEventType::kLockReleased});
  EXPECT_GE(events[0].fields[3], std::chrono::nanoseconds(2 * LockTrace::kLongHold).count());
}

// A hold taken before the trace started has no start to measure from: its release is not emitted.
TEST(LockTrace, AHoldFromBeforeTheTraceIsNotEmitted) {
  SleepingAllocLock lock(sync::LockPolicy::kBarging, kSleepingLockDesign);
  lock.lock();
  RecordingSink sink;
  std::this_thread::sleep_for(2 * LockTrace::kLongHold);
  lock.unlock();
  EXPECT_TRUE(sink.events().empty());
}

class PageEventsTest : public ::testing::Test {
 protected:
  static std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  static AllocatorOptions options() {
    AllocatorOptions options;
    options.pid = 580;
    return options;
  }
  PageLru lru;
};

// cused_page_install: one per run installed with one system call, after its pages' ends.
TEST_F(PageEventsTest, EachInstalledRunHasItsPagesAndDuration) {
  TestProc proc(lru, {}, 1 << 20, options());
  RecordingSink sink;
  Buffer* buffer = proc.sync_buffer(3 * page());
  const std::vector<TraceEvent> installs = sink.of_type(TraceEventType::kPageInstall);
  const std::vector<TraceEvent> starts = sink.of_type(TraceEventType::kAllocPageStart);
  ASSERT_FALSE(installs.empty());
  std::uint64_t pages = 0;
  for (const TraceEvent& install : installs) {
    EXPECT_EQ(install.fields[0], 580u);
    EXPECT_GT(install.fields[2], 0u);
    EXPECT_GT(install.fields[3], 0u) << "ns";
    pages += install.fields[2];
  }
  EXPECT_EQ(pages, starts.size());
  EXPECT_EQ(installs[0].fields[1], starts[0].fields[1]) << "the run's first page";
  // After the run's last binder_alloc_page_end: the duration covers the installation.
  const std::vector<TraceEventType> order = types(sink.events());
  const auto last_end = std::find(order.rbegin(), order.rend(), TraceEventType::kAllocPageEnd);
  ASSERT_NE(last_end, order.rend());
  EXPECT_EQ(last_end.base(),
            std::find(order.rbegin(), order.rend(), TraceEventType::kPageInstall).base() - 1);
  proc.alloc->free_buffer(*buffer);
}

// cused_page_reclaim per page punched, then one cused_shrinker_pass counting the walk.
TEST_F(PageEventsTest, AShrinkerPassReclaimsPagesWithTheirDurations) {
  TestProc proc(lru, {}, 1 << 20, options());
  proc.alloc->free_buffer(*proc.sync_buffer(3 * page()));
  Buffer* live = proc.sync_buffer(page());
  RecordingSink sink;
  Shrinker shrinker(lru);
  const ReclaimResult result = shrinker.reclaim(false);
  const std::vector<TraceEvent> reclaims = sink.of_type(TraceEventType::kPageReclaim);
  const std::vector<TraceEvent> unmaps = sink.of_type(TraceEventType::kUnmapUserEnd);
  ASSERT_EQ(reclaims.size(), result.pages);
  ASSERT_EQ(unmaps.size(), result.pages);
  for (std::size_t i = 0; i < reclaims.size(); ++i) {
    EXPECT_EQ(reclaims[i].fields[0], 580u);
    EXPECT_EQ(reclaims[i].fields[1], unmaps[i].fields[1]) << "page_index";
    EXPECT_GT(reclaims[i].fields[2], 0u) << "ns";
  }
  const std::vector<TraceEvent> passes = sink.of_type(TraceEventType::kShrinkerPass);
  ASSERT_EQ(passes.size(), 1u);
  EXPECT_EQ(passes[0].fields[0], result.pages + result.skipped) << "scanned";
  EXPECT_EQ(passes[0].fields[1], result.pages) << "freed";
  EXPECT_EQ(passes[0].fields[2], result.skipped);
  EXPECT_GT(passes[0].fields[1], 0u);
  EXPECT_GT(passes[0].fields[3], 0u) << "ns";
  EXPECT_EQ(types(sink.events()).back(), TraceEventType::kShrinkerPass);
  proc.alloc->free_buffer(*live);
}

// The stress loop's walks over an empty LRU are no event (the kernel scans no shrinker whose
// count is 0); a walk that pressure or a shrink request asked for is one, empty or not.
TEST_F(PageEventsTest, AnEmptyUnaskedShrinkerPassIsNoEvent) {
  Shrinker shrinker(lru);
  {
    RecordingSink sink;
    const ReclaimResult result = shrinker.reclaim(false);
    ASSERT_EQ(result.pages + result.skipped, 0u);
    EXPECT_TRUE(sink.of_type(TraceEventType::kShrinkerPass).empty());
  }
  {
    RecordingSink sink;
    shrinker.reclaim(true);
    EXPECT_EQ(sink.of_type(TraceEventType::kShrinkerPass).size(), 1u) << "under pressure";
  }
  {
    RecordingSink sink;
    std::vector<std::promise<ReclaimResult>> requests(1);
    shrinker.reclaim(false, std::move(requests));
    EXPECT_EQ(sink.of_type(TraceEventType::kShrinkerPass).size(), 1u) << "asked for";
  }
}

// Issue 45 point 2: every registered design's page events, the kernel designs' (their file's
// own trace_binder_* calls, through the shim) among them, as binder_alloc.c emits them (S9.5,
// docs/tracing.md): a buffer's allocation prints binder_update_page_range allocate=1 from its
// first page, then each missing page's binder_alloc_page_start/_end; its free prints
// allocate=0 and puts each page on the LRU (binder_free_lru_start/_end); the next allocation
// of those pages takes them back (binder_alloc_lru_start/_end); the shrinker's reclaim of a page
// prints binder_unmap_user_start/_end and cused_page_reclaim. cused's designs install a run of
// pages with one system call (docs/tracing.md, "Several pages installed at once"), so the test
// asserts each page's events, not their interleaving.
class DesignPageEventsTest : public ::testing::TestWithParam<Variant> {
 protected:
  static constexpr pid_t kPid = 580;
  static constexpr std::size_t kPages = 3;
  static std::size_t page() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
  static AllocatorOptions options() {
    AllocatorOptions options;
    options.pid = kPid;
    return options;
  }
  // The page_index fields of `sink`'s events of `type`, in order.
  static std::vector<std::uint64_t> pages_of(const RecordingSink& sink, TraceEventType type) {
    std::vector<std::uint64_t> out;
    for (const TraceEvent& event : sink.of_type(type)) {
      EXPECT_EQ(event.fields[0], static_cast<std::uint64_t>(kPid)) << trace_event_name(type);
      out.push_back(event.fields[1]);
    }
    return out;
  }
  // The binder_update_page_range events with allocate=`allocate`: {offset, size}.
  static std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges(const RecordingSink& sink,
                                                                     bool allocate) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    for (const TraceEvent& event : sink.of_type(TraceEventType::kUpdatePageRange)) {
      EXPECT_EQ(event.fields[0], static_cast<std::uint64_t>(kPid));
      if (event.fields[1] == (allocate ? 1u : 0u))
        out.emplace_back(event.fields[2], event.fields[3]);
    }
    return out;
  }
  // Whether one of `ranges` covers the buffer's pages [0, kPages).
  static bool covers_buffer(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
    return std::any_of(ranges.begin(), ranges.end(), [](const auto& range) {
      return range.first == 0 && range.second >= kPages * page() &&
             range.second < std::uint64_t{1} << 32;  // not an end before its start
    });
  }
  static std::vector<std::uint64_t> buffer_pages() { return {0, 1, 2}; }
  static std::vector<std::uint64_t> sorted(std::vector<std::uint64_t> pages) {
    std::sort(pages.begin(), pages.end());
    return pages;
  }

  PageLru lru;
};

TEST_P(DesignPageEventsTest, AllocationFreeReuseAndReclaimPrintTheKernelsPageEvents) {
  TestProc proc(lru, GetParam(), 1 << 20, options());
  Buffer* buffer = nullptr;
  {
    RecordingSink sink;
    buffer = proc.sync_buffer(kPages * page());
    ASSERT_NE(buffer, nullptr);
    ASSERT_EQ(buffer->offset(), 0u);
    EXPECT_TRUE(covers_buffer(ranges(sink, true))) << "binder_update_page_range allocate=1";
    const std::vector<TraceEventType> order = types(sink.events());
    EXPECT_LT(std::find(order.begin(), order.end(), TraceEventType::kUpdatePageRange),
              std::find(order.begin(), order.end(), TraceEventType::kAllocPageStart))
        << "the range comes before its pages";
    EXPECT_EQ(sorted(pages_of(sink, TraceEventType::kAllocPageStart)), buffer_pages());
    EXPECT_EQ(sorted(pages_of(sink, TraceEventType::kAllocPageEnd)), buffer_pages());
    std::uint64_t installed = 0;
    for (const TraceEvent& install : sink.of_type(TraceEventType::kPageInstall))
      installed += install.fields[2];
    EXPECT_EQ(installed, kPages) << "cused_page_install";
    EXPECT_TRUE(pages_of(sink, TraceEventType::kAllocLruStart).empty()) << "no page was on the LRU";
  }
  {
    RecordingSink sink;
    proc.alloc->free_buffer(*buffer);
    EXPECT_TRUE(covers_buffer(ranges(sink, false))) << "binder_update_page_range allocate=0";
    EXPECT_TRUE(ranges(sink, true).empty());
    // 6.1's binder_update_page_range frees from the range's last page down; later files and
    // cused's designs from its first page up.
    std::vector<std::uint64_t> freed = buffer_pages();
    if (kernel_version_code(GetParam()) != 0 &&
        kernel_version_code(GetParam()) < kernel_version(6, 2))
      std::reverse(freed.begin(), freed.end());
    EXPECT_EQ(pages_of(sink, TraceEventType::kFreeLruStart), freed);
    EXPECT_EQ(pages_of(sink, TraceEventType::kFreeLruEnd), freed);
    EXPECT_TRUE(sink.of_type(TraceEventType::kAllocPageStart).empty());
  }
  {
    RecordingSink sink;
    buffer = proc.sync_buffer(kPages * page());
    ASSERT_NE(buffer, nullptr);
    EXPECT_TRUE(covers_buffer(ranges(sink, true)));
    EXPECT_EQ(pages_of(sink, TraceEventType::kAllocLruStart), buffer_pages()) << "S9.5";
    EXPECT_EQ(pages_of(sink, TraceEventType::kAllocLruEnd), buffer_pages());
    EXPECT_TRUE(sink.of_type(TraceEventType::kAllocPageStart).empty()) << "still installed";
    proc.alloc->free_buffer(*buffer);
  }
  RecordingSink sink;
  Shrinker shrinker(lru);
  const ReclaimResult result = shrinker.reclaim(false);
  EXPECT_EQ(result.pages, kPages);
  EXPECT_EQ(sorted(pages_of(sink, TraceEventType::kUnmapUserStart)), buffer_pages());
  EXPECT_EQ(sorted(pages_of(sink, TraceEventType::kUnmapUserEnd)), buffer_pages());
  EXPECT_EQ(sorted(pages_of(sink, TraceEventType::kPageReclaim)), buffer_pages());
}

// A buffer within a page it shares with an allocated neighbour has no page to itself: the
// kernel's file still prints its range, empty (6.12 and 7.2) or not at all (6.1, whose
// binder_update_page_range returns first), and puts no page on the LRU when it is freed, since
// its neighbour still uses the page.
TEST_P(DesignPageEventsTest, ABufferInASharedPageTakesNoPageFromTheLru) {
  TestProc proc(lru, GetParam(), 1 << 20, options());
  Buffer* first = proc.sync_buffer(64);
  ASSERT_NE(first, nullptr);
  RecordingSink sink;
  Buffer* second = proc.sync_buffer(64);
  ASSERT_NE(second, nullptr);
  ASSERT_LT(second->offset(), page());
  proc.alloc->free_buffer(*second);
  EXPECT_TRUE(sink.of_type(TraceEventType::kAllocPageStart).empty());
  EXPECT_TRUE(sink.of_type(TraceEventType::kFreeLruStart).empty()) << "page 0 is still used";
  EXPECT_TRUE(sink.of_type(TraceEventType::kAllocLruStart).empty());
  proc.alloc->free_buffer(*first);
}

// Issue 45 point 2: the other locks a kernel design's file takes emit cused_lock_* under their
// names, with the tree's design id, as its metadata lock does (lock=alloc): the static
// binder_alloc_mmap_lock (lock=alloc_mmap), the proc's mmap lock (lock=mmap) and the per-VMA
// lock (lock=vma). The locks are made as the shim makes them (the runtime's lock_create and
// rwlock_create, for the proc's allocator); a reader waits behind a writer, a writer behind a
// reader.
TEST_P(DesignPageEventsTest, AKernelDesignsOtherLocksAreTracedByName) {
  TestProc proc(lru, GetParam(), 1 << 20, options());
  auto* kernel = dynamic_cast<KernelAllocator*>(proc.alloc.get());
  if (kernel == nullptr)
    GTEST_SKIP() << "cused's designs take no lock but lock=alloc/alloc_install";
  const cused_krt& rt = kernel_runtime();
  const std::uint64_t design = kernel->trace_id();
  auto expect_named = [&](const std::vector<TraceEvent>& events, TracedLock name,
                          std::uint64_t policy) {
    ASSERT_EQ(types(events),
              (std::vector{TraceEventType::kLockContended, TraceEventType::kLockAcquired,
                           TraceEventType::kLockReleased}));
    for (const TraceEvent& event : events) {
      EXPECT_EQ(event.fields[0], static_cast<std::uint64_t>(name)) << to_string(name);
      EXPECT_EQ(event.fields[1], design);
      EXPECT_EQ(event.fields[2], policy);
    }
  };
  const auto barging = static_cast<std::uint64_t>(sync::LockPolicy::kBarging);
  {
    void* mutex = rt.lock_create(kernel, CUSED_KLOCK_MUTEX, "binder_alloc_mmap_lock");
    struct Adapter {
      void* made;
      void lock() { kernel_runtime().lock_lock(made); }
      void unlock() { kernel_runtime().lock_unlock(made); }
    } adapter{mutex};
    RecordingSink sink;
    contend(adapter, sink);
    expect_named(sink.of_task(kWaiter), TracedLock::alloc_mmap, barging);
    rt.lock_destroy(mutex);
  }
  for (auto [kernel_name, name] : {std::pair{"&mm->mmap_lock", TracedLock::mmap},
                                   std::pair{"vma->vm_lock", TracedLock::vma}}) {
    void* rwlock = rt.rwlock_create(kernel, kernel_name);
    ASSERT_NE(rwlock, nullptr);
    {
      // A reader behind a writer.
      RecordingSink sink;
      contend_with(
          sink, [&] { rt.rwlock_write_lock(rwlock); },
          [&] {
            rt.rwlock_read_lock(rwlock);
            rt.rwlock_read_unlock(rwlock);
          },
          [&] { rt.rwlock_write_unlock(rwlock); });
      expect_named(sink.of_task(kWaiter), name, barging);
      const std::vector<TraceEvent> writer = sink.of_task(kHolder);
      ASSERT_EQ(types(writer), std::vector{TraceEventType::kLockReleased}) << "a long hold";
      EXPECT_EQ(writer[0].fields[0], static_cast<std::uint64_t>(name));
    }
    {
      // A writer behind a reader; two readers side by side are no contention.
      RecordingSink sink;
      contend_with(
          sink,
          [&] {
            rt.rwlock_read_lock(rwlock);
            std::thread([&] {
              EXPECT_EQ(rt.rwlock_read_trylock(rwlock), 1);
              rt.rwlock_read_unlock(rwlock);
            }).join();
            EXPECT_FALSE(sink.has(TraceEventType::kLockContended)) << "readers share the lock";
          },
          [&] {
            rt.rwlock_write_lock(rwlock);
            rt.rwlock_write_unlock(rwlock);
          },
          [&] { rt.rwlock_read_unlock(rwlock); });
      expect_named(sink.of_task(kWaiter), name, barging);
    }
    rt.rwlock_destroy(rwlock);
  }
}

INSTANTIATE_TEST_SUITE_P(Designs, DesignPageEventsTest, ::testing::ValuesIn(each_design()),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
}  // namespace cused::core::alloc::testing

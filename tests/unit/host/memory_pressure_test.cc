// SPDX-License-Identifier: GPL-2.0-only
// The daemon's memory-pressure sources for the shrinker (cused/host/memory_pressure.h): the PSI
// trigger and the cgroup v2 lookup behind the cgroup's memory.events.
#include "cused/host/memory_pressure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/alloc/page_lru.h"
#include "cused/host/shrinker_thread.h"

namespace cused::host {
namespace {

// The daemon's sources reach the shrinker's stats: PSI armed, or the reason it is not.
TEST(MemoryPressure, PsiTriggerIsArmedOrTheReasonIsReported) {
  std::string why_not;
  bool psi = open_psi_trigger(kDefaultPsiTrigger, why_not) != nullptr;
  core::alloc::PageLru lru;
  ShrinkerOptions options;
  add_memory_pressure_sources(options);
  ShrinkerThread shrinker(lru, std::move(options));
  core::alloc::ShrinkerStats stats = shrinker.stats();
  EXPECT_EQ(stats.sources.size() + stats.unavailable.size(), 2u) << "PSI and cgroup, each once";
  if (!psi) {
    EXPECT_FALSE(stats.unavailable.empty());
    GTEST_SKIP() << "no PSI trigger here: " << why_not;
  }
  EXPECT_EQ(stats.sources.front(), "psi");
  // The kernel validates triggers: a malformed one is refused.
  EXPECT_EQ(open_psi_trigger("some nonsense", why_not), nullptr);
  EXPECT_NE(why_not.find("Invalid argument"), std::string::npos) << why_not;
}

TEST(CgroupPressure, FindsTheCgroup2MountAndPath) {
  const char* mountinfo =
      "25 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
      "36 25 0:31 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw\n"
      "37 25 0:32 / /sys/fs/cgroup/memory rw shared:10 - cgroup cgroup rw,memory\n";
  EXPECT_EQ(cgroup2_mount_point(mountinfo), "/sys/fs/cgroup/unified");
  EXPECT_EQ(cgroup2_mount_point("25 30 0:22 / /sys rw - sysfs sysfs rw\n"), std::nullopt);
  EXPECT_EQ(cgroup2_path("4:memory:/a\n0::/system.slice/cused.service\n"),
            "/system.slice/cused.service");
  EXPECT_EQ(cgroup2_path("4:memory:/a\n"), std::nullopt);
}

TEST(CgroupPressure, UsesTheNearestCgroupWithAMemoryLimit) {
  namespace fs = std::filesystem;
  fs::path root = fs::temp_directory_path() / ("cused-cgroup-" + std::to_string(getpid()));
  fs::create_directories(root / "daemon.slice" / "cused");
  auto write = [](const fs::path& path, const char* text) { std::ofstream(path) << text; };
  write(root / "daemon.slice" / "cused" / "memory.max", "max\n");
  write(root / "daemon.slice" / "cused" / "memory.high", "max\n");
  EXPECT_EQ(limited_cgroup_dir(root.string(), "/daemon.slice/cused"), std::nullopt);
  write(root / "daemon.slice" / "memory.max", "268435456\n");
  EXPECT_EQ(limited_cgroup_dir(root.string(), "/daemon.slice/cused"),
            (root / "daemon.slice").string());
  write(root / "daemon.slice" / "cused" / "memory.high", "100000000\n");
  EXPECT_EQ(limited_cgroup_dir(root.string(), "/daemon.slice/cused"),
            (root / "daemon.slice" / "cused").string());
  fs::remove_all(root);
}

TEST(CgroupPressure, OnlyRisingHighMaxOrOomCountsArePressure) {
  MemoryEvents before = parse_memory_events("low 0\nhigh 3\nmax 1\noom 0\noom_kill 0\n");
  EXPECT_EQ(before.high, 3u);
  EXPECT_EQ(before.max, 1u);
  EXPECT_FALSE(pressure_rose(before, parse_memory_events("low 9\nhigh 3\nmax 1\noom 0\n")));
  EXPECT_TRUE(pressure_rose(before, parse_memory_events("low 0\nhigh 4\nmax 1\noom 0\n")));
  EXPECT_TRUE(pressure_rose(before, parse_memory_events("low 0\nhigh 3\nmax 1\noom 1\n")));
}

}  // namespace
}  // namespace cused::host

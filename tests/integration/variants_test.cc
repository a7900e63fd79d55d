// SPDX-License-Identifier: GPL-2.0-only
// Variants, live (docs/design.md section 5, issue 6) through a mounted binderfs: binder-control
// creates a device with a variant ("NAME:SPEC"), cused's own control ioctls (uapi/cused.h) read and
// change it, a change reaches procs opened afterwards only, and "shrink now" reclaims unused pages.
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "core/alloc/variant.h"
#include "core/device_variant.h"
#include "core/driver.h"
#include "core/proc.h"
#include "cused/host/shrinker_thread.h"
#include "cused/request/caller_scheduling.h"
#include "tests/integration/mounted_binderfs.h"
#include "tests/integration/tool_process.h"
#include "uapi/cused.h"

namespace cused {
namespace {

using client::BinderDevice;
using namespace std::chrono_literals;

constexpr const char* kDefault =
    "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context=caller,"
    "install_latency_us=0";

// The daemon's log lines (libfuse's fuse_log, which cused logs through) while a test runs.
class LogCapture {
 public:
  LogCapture() {
    std::lock_guard guard(lock());
    lines().clear();
    fuse_set_log_func(&LogCapture::log);
  }
  ~LogCapture() { fuse_set_log_func(nullptr); }
  bool contains(const std::string& text) const {
    std::lock_guard guard(lock());
    for (const auto& line : lines())
      if (line.find(text) != std::string::npos) return true;
    return false;
  }

 private:
  static void log(fuse_log_level, const char* format, va_list args) {
    char line[1024];
    std::vsnprintf(line, sizeof line, format, args);
    std::lock_guard guard(lock());
    lines().emplace_back(line);
  }
  static std::mutex& lock() {
    static std::mutex mutex;
    return mutex;
  }
  static std::vector<std::string>& lines() {
    static std::vector<std::string> all;
    return all;
  }
};

binderfs::FilesystemOptions options_with() {
  binderfs::FilesystemOptions options;
  options.devices = {"binder", "fast"};
  auto fast = core::parse_device_variant("alloc_lock=spin-install,defer_complete=off");
  options.variants["fast"] = std::get<core::DeviceOptions>(fast);
  return options;
}

// A registry whose CUSED_CTL_SHRINK runs `shrinker`.
devices::RegistryOptions shrinking_with(host::ShrinkerThread& shrinker) {
  devices::RegistryOptions options;
  options.shrink_now = [&shrinker] { return shrinker.shrink_now(); };
  return options;
}

// 0 or -errno of one binder-control ioctl on the mount at `dir`.
int control(const std::string& dir, unsigned cmd, void* arg) {
  BinderDevice control(dir + "/binder-control");
  return control.ioctl(cmd, arg);
}

// The resulting variant of CUSED_CTL_SET_VARIANT, or "errno N".
std::string set_variant(const std::string& dir, const std::string& name, const std::string& spec) {
  uapi::cused_device_variant argument{};
  std::strncpy(argument.name, name.c_str(), BINDERFS_MAX_NAME);
  std::strncpy(argument.spec, spec.c_str(), sizeof argument.spec - 1);
  int result = control(dir, uapi::CUSED_CTL_SET_VARIANT, &argument);
  return result == 0 ? std::string(argument.spec) : "errno " + std::to_string(-result);
}

class VariantsTest : public ::testing::Test {
 protected:
  int control(unsigned cmd, void* arg) { return cused::control(mount_.dir(), cmd, arg); }
  int add(const std::string& name_and_spec) {
    binderfs_device device{};
    std::strncpy(device.name, name_and_spec.c_str(), BINDERFS_MAX_NAME);
    return control(BINDER_CTL_ADD, &device);
  }
  // The device's variant, or "errno N".
  std::string get(const std::string& name) {
    uapi::cused_device_variant argument{};
    std::strncpy(argument.name, name.c_str(), BINDERFS_MAX_NAME);
    int result = control(uapi::CUSED_CTL_GET_VARIANT, &argument);
    return result == 0 ? std::string(argument.spec) : "errno " + std::to_string(-result);
  }
  std::string set(const std::string& name, const std::string& spec) {
    return set_variant(mount_.dir(), name, spec);
  }
  // The variants of this process's open procs.
  std::multiset<std::string> proc_variants() {
    std::multiset<std::string> variants;
    mount_.registry().for_each_proc_of(
        getpid(), [&](core::Proc& proc) { variants.insert(core::to_string(proc.options())); });
    return variants;
  }

  LogCapture log_;
  testing::MountedBinderfs mount_{options_with()};
};

// exec_context= (issue 18): a caller at nice 12 has its ioctls served at its scheduling on a
// device with exec_context=caller (the default): each request changes the serving daemon thread's
// attributes, which CallerScheduling counts; never with exec_context=daemon.
TEST_F(VariantsTest, ExecContextServesRequestsAtTheCallersScheduling) {
  ASSERT_EQ(add("own:exec_context=daemon,install_latency_us=0"), 0);
  EXPECT_EQ(get("own"),
            "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=on,exec_context="
            "daemon,install_latency_us=0");
  constexpr int kCalls = 10;
  auto changes_for_calls_on = [&](const std::string& device) {
    const std::uint64_t before = CallerScheduling::changes();
    std::thread([&] {
      ASSERT_EQ(setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 12), 0);
      BinderDevice node(mount_.path(device));
      for (int i = 0; i < kCalls; ++i) EXPECT_GE(node.version(), 0);
    }).join();
    return CallerScheduling::changes() - before;
  };
  EXPECT_GE(changes_for_calls_on("binder"), static_cast<std::uint64_t>(kCalls));
  EXPECT_EQ(changes_for_calls_on("own"), 0u);
}

// --device NAME:SPEC (FilesystemOptions::variants) and the default for devices given none.
TEST_F(VariantsTest, DevicesStartWithTheirConfiguredVariant) {
  EXPECT_EQ(get("binder"), kDefault);
  EXPECT_EQ(get("fast"),
            "alloc_lock=spin-install,pages=eager,lock_policy=barging,defer_complete=off,exec_"
            "context=caller,install_latency_us=0");
}

// BINDER_CTL_ADD "NAME:SPEC" (a cused difference, docs/binderfs.md) makes a device NAME that
// carries the variant; procs opened on it get it.
TEST_F(VariantsTest, ControlAddWithSpecCreatesDeviceWithThatVariant_S10_3) {
  ASSERT_EQ(add("lazy:pages=lazy,lock_policy=handoff"), 0);
  EXPECT_TRUE(std::filesystem::exists(mount_.path("lazy")));
  EXPECT_FALSE(std::filesystem::exists(mount_.path("lazy:pages=lazy,lock_policy=handoff")));
  EXPECT_EQ(get("lazy"),
            "alloc_lock=mutex,pages=lazy,lock_policy=handoff,defer_complete=on,exec_context=caller,"
            "install_latency_us=0");
  BinderDevice proc(mount_.path("lazy"));
  ASSERT_EQ(proc.version(), 8);
  EXPECT_EQ(proc_variants(),
            (std::multiset<std::string>{"alloc_lock=mutex,pages=lazy,lock_policy=handoff,defer_"
                                        "complete=on,exec_context=caller,install_latency_us=0"}));
  ASSERT_EQ(add("plain"), 0);
  EXPECT_EQ(get("plain"), kDefault);
}

// A bad spec in BINDER_CTL_ADD is EINVAL with the reason in the daemon's log; no device appears.
TEST_F(VariantsTest, ControlAddWithBadSpecIsEinvalAndLogged_S10_3) {
  EXPECT_EQ(add("bad:alloc_lock=rwlock"), -EINVAL);
  EXPECT_FALSE(std::filesystem::exists(mount_.path("bad")));
  EXPECT_EQ(get("bad"), "errno " + std::to_string(ENOENT));
  EXPECT_TRUE(
      log_.contains("bad alloc_lock=rwlock: expected one of " + core::alloc::lock_variant_names()));
  EXPECT_EQ(add("binder:pages=lazy"), -EEXIST) << "an existing name stays EEXIST";
}

TEST_F(VariantsTest, GetAndSetOfUnknownDeviceAreEnoent) {
  EXPECT_EQ(get("nosuch"), "errno " + std::to_string(ENOENT));
  EXPECT_EQ(set("nosuch", "pages=lazy"), "errno " + std::to_string(ENOENT));
  EXPECT_EQ(get("binder-control"), "errno " + std::to_string(ENOENT));
}

// A bad spec changes nothing: EINVAL, a log line naming the problem, the variant as it was.
TEST_F(VariantsTest, SetWithBadSpecIsEinvalAndLoggedAndChangesNothing) {
  EXPECT_EQ(set("binder", "pages=lazy,colour=blue"), "errno " + std::to_string(EINVAL));
  EXPECT_TRUE(log_.contains("unknown variant key 'colour'"));
  EXPECT_EQ(set("binder", "defer_complete"), "errno " + std::to_string(EINVAL));
  EXPECT_TRUE(log_.contains("'defer_complete' is not key=value"));
  EXPECT_EQ(get("binder"), kDefault);
}

// Keys the spec leaves out keep the device's current values; the answer is the whole variant.
TEST_F(VariantsTest, SetChangesOnlyTheGivenKeys) {
  EXPECT_EQ(set("fast", "pages=lazy"),
            "alloc_lock=spin-install,pages=lazy,lock_policy=barging,defer_complete=off,exec_"
            "context=caller,install_latency_us=0");
  EXPECT_EQ(get("fast"),
            "alloc_lock=spin-install,pages=lazy,lock_policy=barging,defer_complete=off,exec_"
            "context=caller,install_latency_us=0");
  EXPECT_EQ(get("binder"), kDefault) << "other devices are untouched";
}

// docs/design.md section 5: a proc opened before a change keeps its variant (what runs: its
// allocator's lock design), one opened after gets the new one.
TEST_F(VariantsTest, ChangeAppliesToProcsOpenedAfterwardsOnly) {
  BinderDevice before(mount_.path("binder"));
  ASSERT_EQ(before.version(), 8);
  const std::string changed =
      "alloc_lock=spin,pages=lazy,lock_policy=barging,defer_complete=off,exec_context=caller,"
      "install_latency_us=0";
  ASSERT_EQ(set("binder", "alloc_lock=spin,pages=lazy,defer_complete=off"), changed);
  BinderDevice after(mount_.path("binder"));
  ASSERT_EQ(after.version(), 8);
  EXPECT_EQ(proc_variants(), (std::multiset<std::string>{kDefault, changed}));
  std::multiset<core::alloc::LockVariant> locks;
  mount_.registry().for_each_proc_of(
      getpid(), [&](core::Proc& proc) { locks.insert(proc.allocator().variant().lock); });
  EXPECT_EQ(locks,
            (std::multiset<core::alloc::LockVariant>{core::alloc::LockVariant::named("mutex"),
                                                     core::alloc::LockVariant::named("spin")}));
}

// Without a shrinker (a Filesystem nobody gave one) the request is not served.
TEST_F(VariantsTest, ShrinkWithoutShrinkerIsEnotty) {
  uapi::cused_shrink_result result{};
  EXPECT_EQ(control(uapi::CUSED_CTL_SHRINK, &result), -ENOTTY);
}

// Unknown binder-control commands stay EINVAL, as binderfs answers (S10.3).
TEST_F(VariantsTest, UnknownControlCommandIsEinval_S10_3) {
  unsigned unknown = _IOWR(uapi::kCusedIoctlMagic, 99, uapi::cused_device_variant);
  uapi::cused_device_variant argument{};
  EXPECT_EQ(control(unknown, &argument), -EINVAL);
}

// A oneway to the context manager from another process (S4.1 refuses a call to handle 0 from
// the manager's own process); 0 once the sender saw BR_TRANSACTION_COMPLETE.
int send_oneway_from_child(const std::string& device) {
  std::vector<std::byte> payload(3000, std::byte{0x5a});
  binder_transaction_data tr{};
  tr.target.handle = 0;
  tr.flags = TF_ONE_WAY;
  tr.data_size = payload.size();
  tr.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(payload.data());
  struct __attribute__((packed)) {
    std::uint32_t cmd;
    binder_transaction_data tr;
  } send{BC_TRANSACTION, tr};
  std::uint32_t words[64];
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(&send);
  bwr.write_size = sizeof send;
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  pid_t child = fork();
  if (child == 0) {
    BinderDevice client(device);
    bool ok = client.map() == 0 && client.write_read(bwr) == 0 && bwr.read_consumed == 8 &&
              words[1] == BR_TRANSACTION_COMPLETE;
    _exit(ok ? 0 : 1);
  }
  int status = -1;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The manager reads the oneway and frees its buffer: the buffer's pages go to the LRU.
void receive_and_free(const BinderDevice& manager) {
  std::uint32_t words[64];
  binder_write_read bwr{};
  bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(words);
  bwr.read_size = sizeof words;
  ASSERT_EQ(manager.write_read(bwr), 0);
  ASSERT_EQ(words[1], static_cast<std::uint32_t>(BR_TRANSACTION)) << std::hex << words[1];
  binder_transaction_data delivered;
  std::memcpy(&delivered, &words[2], sizeof delivered);
  ASSERT_EQ(delivered.data_size, 3000u);
  struct __attribute__((packed)) {
    std::uint32_t cmd;
    binder_uintptr_t buffer;
  } free_buffer{BC_FREE_BUFFER, delivered.data.ptr.buffer};
  bwr = {};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(&free_buffer);
  bwr.write_size = sizeof free_buffer;
  ASSERT_EQ(manager.write_read(bwr), 0);
}

// CUSED_CTL_SHRINK runs the daemon's shrinker over every reclaimable page now and says what it
// freed; a page left unused by a freed buffer is among them.
// tests/designs/run's CUSED_VARIANT reaches an in-process mount as it reaches the daemon's
// --variant: the suites that serve themselves (servicemanager, binder-throughput) run the design
// they are given, over what the test configured (S10.3's variant keys), and a bad one is refused.
TEST(VariantsEnvironmentTest, CusedVariantPutsAnInProcessMountUnderThatDesign) {
  ASSERT_EQ(setenv("CUSED_VARIANT", "alloc_lock=spin-install,pages=lazy", 1), 0);
  {
    testing::MountedBinderfs mount;
    const std::string spec = core::to_string(mount.registry().default_variant());
    EXPECT_NE(spec.find("alloc_lock=spin-install"), std::string::npos) << spec;
    EXPECT_NE(spec.find("pages=lazy"), std::string::npos) << spec;
  }
  ASSERT_EQ(setenv("CUSED_VARIANT", "alloc_lock=no-such-design", 1), 0);
  EXPECT_THROW(testing::MountedBinderfs{}, std::runtime_error);
  ASSERT_EQ(unsetenv("CUSED_VARIANT"), 0);
  testing::MountedBinderfs mount;
  EXPECT_NE(core::to_string(mount.registry().default_variant()).find("alloc_lock=mutex"),
            std::string::npos);
}

TEST(VariantsShrinkTest, ShrinkNowReclaimsUnusedPages) {
  host::ShrinkerThread shrinker(core::Driver::shared_default()->page_lru());
  testing::MountedBinderfs mount(options_with(), {}, shrinking_with(shrinker));
  BinderDevice manager(mount.path("binder"));
  ASSERT_EQ(manager.map(), 0);
  int zero = 0;
  ASSERT_EQ(manager.ioctl(BINDER_SET_CONTEXT_MGR, &zero), 0);
  ASSERT_EQ(send_oneway_from_child(mount.path("binder")), 0);
  receive_and_free(manager);
  ASSERT_GE(core::Driver::shared_default()->page_lru().size(), 1u);

  BinderDevice control(mount.path("binder-control"));
  uapi::cused_shrink_result result{};
  ASSERT_EQ(control.ioctl(uapi::CUSED_CTL_SHRINK, &result), 0);
  EXPECT_GE(result.pages, 1u);
  EXPECT_EQ(result.bytes, result.pages * static_cast<std::uint64_t>(getpagesize()));
  EXPECT_EQ(core::Driver::shared_default()->page_lru().size(), 0u);
  EXPECT_EQ(shrinker.stats().requests, 1u);
  // Nothing is left to take: a second request frees nothing.
  ASSERT_EQ(control.ioctl(uapi::CUSED_CTL_SHRINK, &result), 0);
  EXPECT_EQ(result.pages, 0u);
}

// What a user of TF_DEFER_COMPLETE sees (binder-throughput --defer-complete counts its ioctls):
// turning defer_complete off on a live device makes the workers started afterwards spend the
// legacy flow's third ioctl per call, while the servicemanager, opened before, keeps deferring
// in its own variant.
TEST(VariantsLiveTest, DeferCompleteChangeReachesLaterProcsOnly) {
  testing::MountedBinderfs mount(options_with());
  testing::ToolProcess servicemanager(
      {testing::binary_from_env("SERVICEMANAGER_BINARY"), "--device", mount.path("binder")});
  auto ioctls_per_call = [&] {
    testing::ToolProcess tool({testing::binary_from_env("BINDER_THROUGHPUT_BINARY"), "--device",
                               mount.path("binder"), "-w", "2", "-i", "200", "--defer-complete"});
    auto result = tool.finish(30s);
    EXPECT_FALSE(result.timed_out) << result.output;
    auto at = result.output.find("ioctls per transaction: ");
    EXPECT_NE(at, std::string::npos) << result.output;
    return at == std::string::npos ? -1.0 : std::stod(result.output.substr(at + 24));
  };
  double deferred = ioctls_per_call();
  EXPECT_GE(deferred, 1.9);
  EXPECT_LE(deferred, 2.2);

  ASSERT_EQ(set_variant(mount.dir(), "binder", "defer_complete=off"),
            "alloc_lock=mutex,pages=eager,lock_policy=barging,defer_complete=off,exec_context="
            "caller,install_latency_us=0");
  double legacy = ioctls_per_call();
  EXPECT_GE(legacy, 2.9) << "workers opened after the change do not defer";
  EXPECT_LE(legacy, 3.2);

  std::vector<std::string> manager_variants;
  mount.registry().for_each_proc_of(servicemanager.pid(), [&](core::Proc& proc) {
    manager_variants.push_back(core::to_string(proc.options()));
  });
  EXPECT_EQ(manager_variants, std::vector<std::string>{kDefault});
}

}  // namespace
}  // namespace cused

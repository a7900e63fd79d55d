// SPDX-License-Identifier: GPL-2.0-only
// The daemon's device registry (cused/devices/device_registry.h): binderfs's S10.3/S10.4 rules
// for the devices of every frontend in one namespace, live variant changes (docs/design.md
// section 5) for a CUSE device as for a binderfs one, and the open procs `cused run` asks about.
#include "cused/devices/device_registry.h"

#include <gtest/gtest.h>
#include <linux/fs.h>

#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "core/device_variant.h"
#include "core/driver.h"
#include "cused/host/thread_timer.h"
#include "tests/unit/fake_buffer_file.h"

namespace cused::devices {
namespace {

constexpr auto kBinderfs = Frontend::kBinderfs;
constexpr auto kCuse = Frontend::kCuse;

core::DeviceOptions variant_of(const std::string& spec) {
  return std::get<core::DeviceOptions>(core::parse_device_variant(spec));
}

// A proc opened on `device` by thread group `pid`, as a frontend's open makes one.
std::shared_ptr<core::Proc> open_proc(const std::shared_ptr<core::Device>& device, pid_t pid) {
  return core::Proc::open(device, core::OpenerIdentity{pid, pid, 0},
                          testing::FakeBufferFile::create(1 << 16), nullptr);
}

class DeviceRegistryTest : public ::testing::Test {
 protected:
  DeviceRegistryTest() { core::Driver::shared_default()->set_timer(host::ThreadTimer::shared()); }
  ~DeviceRegistryTest() override {
    for (auto& proc : procs_) proc->release();
  }
  std::shared_ptr<core::Proc> open(const std::string& name, pid_t pid) {
    procs_.push_back(open_proc(registry_.device(name), pid));
    return procs_.back();
  }
  DeviceId add(const std::string& name, Frontend frontend = kBinderfs) {
    auto added = registry_.add_device(name, {}, frontend);
    EXPECT_EQ(added.error, 0) << name;
    return added.id;
  }

  DeviceRegistry registry_;
  std::vector<std::shared_ptr<core::Proc>> procs_;
};

TEST_F(DeviceRegistryTest, S10_3_NamesAFileSystemRefusesAreEACCES) {
  for (const char* name : {"", ".", "..", "a/b"})
    EXPECT_EQ(registry_.add_device(name, {}, kBinderfs).error, -EACCES) << '"' << name << '"';
}

TEST_F(DeviceRegistryTest, S10_3_ATakenNameIsEEXISTWhicheverFrontendHasIt) {
  add("binder");
  add("binder-cuse", kCuse);
  EXPECT_EQ(registry_.add_device("binder", {}, kBinderfs).error, -EEXIST);
  EXPECT_EQ(registry_.add_device("binder", {}, kCuse).error, -EEXIST);
  EXPECT_EQ(registry_.add_device("binder-cuse", {}, kBinderfs).error, -EEXIST);
}

TEST_F(DeviceRegistryTest, S10_1_EachFrontendHasItsOwnLimitAndAnUnlinkFreesASlot) {
  DeviceRegistry registry({.max_devices = 2});
  EXPECT_EQ(registry.add_device("a", {}, kBinderfs).error, 0);
  EXPECT_EQ(registry.add_device("b", {}, kBinderfs).error, 0);
  EXPECT_EQ(registry.add_device("c", {}, kBinderfs).error, -ENOSPC);
  EXPECT_EQ(registry.add_device("c", {}, kCuse).error, 0) << "CUSE devices count apart";
  EXPECT_EQ(registry.unlink("a", kBinderfs), 0);
  EXPECT_EQ(registry.add_device("c2", {}, kBinderfs).error, 0);
}

TEST_F(DeviceRegistryTest, IdsAreNeverReusedAndARemovedDeviceLivesOnById_S10_4) {
  DeviceId first = add("binder");
  auto device = registry_.device("binder");
  ASSERT_EQ(registry_.unlink("binder", kBinderfs), 0);
  EXPECT_EQ(registry_.device("binder"), nullptr);
  EXPECT_EQ(registry_.device(first), device) << "an inode looked up before the unlink opens it";
  DeviceId second = add("binder");
  EXPECT_NE(second, first);
  EXPECT_NE(registry_.device("binder"), device);
  EXPECT_EQ(registry_.device(DeviceId{99}), nullptr);
  EXPECT_EQ(registry_.frontend_of(DeviceId{99}), std::nullopt);
}

TEST_F(DeviceRegistryTest, EachFrontendListsOnlyItsOwnDevicesAndStatsSeeAll) {
  add("binder");
  add("binder-cuse", kCuse);
  add("hwbinder");
  std::vector<std::string> names;
  for (const auto& named : registry_.devices_of(kBinderfs)) names.push_back(named.name);
  EXPECT_EQ(names, (std::vector<std::string>{"binder", "hwbinder"}));
  ASSERT_EQ(registry_.devices_of(kCuse).size(), 1u);
  EXPECT_EQ(registry_.devices_of(kCuse)[0].name, "binder-cuse");
  EXPECT_EQ(registry_.live_devices().size(), 3u);
  EXPECT_EQ(registry_.find("binder-cuse", kBinderfs), std::nullopt);
  EXPECT_TRUE(registry_.find("binder-cuse", kCuse).has_value());
}

TEST_F(DeviceRegistryTest, S10_4_UnlinkAndRenameReachOnlyTheirFrontendsDevices) {
  add("binder");
  add("binder-cuse", kCuse);
  EXPECT_EQ(registry_.unlink("binder-cuse", kBinderfs), -ENOENT);
  EXPECT_EQ(registry_.rename("binder-cuse", "x", 0, kBinderfs), -ENOENT);
  EXPECT_EQ(registry_.rename("binder", "binder-cuse", 0, kBinderfs), -EEXIST)
      << "a CUSE device's name is not binderfs's to replace";
  EXPECT_NE(registry_.device("binder-cuse"), nullptr);
}

TEST_F(DeviceRegistryTest, S10_4_RenameReplacesExchangesOrRefuses) {
  add("a");
  add("b");
  auto a = registry_.device("a"), b = registry_.device("b");
  EXPECT_EQ(registry_.rename("a", "b", RENAME_NOREPLACE, kBinderfs), -EEXIST);
  EXPECT_EQ(registry_.rename("a", "b", RENAME_EXCHANGE, kBinderfs), 0);
  EXPECT_EQ(registry_.device("a"), b);
  EXPECT_EQ(registry_.device("b"), a);
  EXPECT_EQ(registry_.rename("a", "c", RENAME_EXCHANGE, kBinderfs), -ENOENT);
  EXPECT_EQ(registry_.rename("nosuch", "c", 0, kBinderfs), -ENOENT);
  EXPECT_EQ(registry_.rename("a", "b", 0, kBinderfs), 0);  // replaces b
  EXPECT_EQ(registry_.device("b"), b);
  EXPECT_EQ(registry_.device("a"), nullptr);
  EXPECT_EQ(registry_.live_devices().size(), 1u) << "the replaced target left the namespace";
}

// docs/design.md section 5, for a CUSE device: the change reaches procs opened afterwards only.
TEST_F(DeviceRegistryTest, SetVariantReachesProcsOpenedAfterwardsOpenOnesKeepTheirs) {
  add("binder-cuse", kCuse);
  auto before = open("binder-cuse", 100);
  auto change = registry_.set_variant("binder-cuse", "alloc_lock=spin-install,pages=lazy");
  ASSERT_EQ(change.error, 0) << change.refusal;
  auto after = open("binder-cuse", 100);
  EXPECT_EQ(core::to_string(before->options()), core::to_string(core::DeviceOptions{}));
  EXPECT_EQ(core::to_string(after->options()),
            core::to_string(variant_of("alloc_lock=spin-install,pages=lazy")));
  EXPECT_EQ(core::to_string(change.variant), core::to_string(after->options()));
  EXPECT_EQ(core::to_string(*registry_.variant("binder-cuse")), core::to_string(change.variant));
}

TEST_F(DeviceRegistryTest, SetVariantKeepsTheKeysItsSpecLeavesOut) {
  add("binder");
  ASSERT_EQ(registry_.set_variant("binder", "pages=lazy").error, 0);
  ASSERT_EQ(registry_.set_variant("binder", "defer_complete=off").error, 0);
  EXPECT_EQ(core::to_string(*registry_.variant("binder")),
            core::to_string(variant_of("pages=lazy,defer_complete=off")));
}

TEST_F(DeviceRegistryTest, SetVariantOfNoDeviceIsENOENTAndABadSpecEINVALChangingNothing) {
  add("binder");
  EXPECT_EQ(registry_.set_variant("nosuch", "pages=lazy").error, ENOENT);
  EXPECT_EQ(registry_.variant("nosuch"), std::nullopt);
  auto refused = registry_.set_variant("binder", "pages=lazy,colour=blue");
  EXPECT_EQ(refused.error, EINVAL);
  EXPECT_NE(refused.refusal.find("colour"), std::string::npos) << refused.refusal;
  EXPECT_EQ(core::to_string(*registry_.variant("binder")), core::to_string(core::DeviceOptions{}));
}

TEST_F(DeviceRegistryTest, ShrinkNowIsTheDaemonsShrinkerOrNothing) {
  EXPECT_EQ(registry_.shrink_now(), std::nullopt);
  DeviceRegistry with_shrinker({.shrink_now = [] {
    return core::alloc::ReclaimResult{3, 3 * 4096, 1};
  }});
  auto freed = with_shrinker.shrink_now();
  ASSERT_TRUE(freed.has_value());
  EXPECT_EQ(freed->pages, 3u);
  EXPECT_EQ(freed->skipped, 1u);
}

TEST_F(DeviceRegistryTest, OpensAreFoundByFileAndByThreadGroupAcrossFrontends) {
  add("binder");
  add("binder-cuse", kCuse);
  auto on_mount = open("binder", 200);
  auto on_cuse = open("binder-cuse", 200);
  auto other = open("binder", 201);
  registry_.add_open(on_mount, true, FileIdentity{7, 1000});
  registry_.add_open(on_cuse, false);
  registry_.add_open(other, false, FileIdentity{7, 1001});
  EXPECT_EQ(registry_.open_procs(), 3u);
  OpenProc found = registry_.open_of({7, 1000});
  EXPECT_EQ(found.proc, on_mount);
  EXPECT_TRUE(found.nonblock);
  EXPECT_EQ(registry_.open_of({8, 1000}).proc, nullptr) << "another file system's inode 1000";
  auto procs = registry_.procs_of(200);
  EXPECT_EQ(procs.size(), 2u);
  int visited = 0;
  registry_.for_each_proc_of(201, [&](core::Proc& proc) { visited += &proc == other.get(); });
  EXPECT_EQ(visited, 1);
}

TEST_F(DeviceRegistryTest, ReleasingAnOpenForgetsItAndTellsTheCloseObserver) {
  add("binder");
  auto proc = open("binder", 300);
  registry_.add_open(proc, false, FileIdentity{7, 2000});
  std::vector<const core::Proc*> closed;
  registry_.set_close_observer([&](const core::Proc& p) { closed.push_back(&p); });
  registry_.descriptor_closed(*proc);  // a flush: the open stays
  EXPECT_EQ(registry_.open_of({7, 2000}).proc, proc);
  registry_.remove_open(*proc);
  EXPECT_EQ(registry_.open_of({7, 2000}).proc, nullptr);
  EXPECT_EQ(registry_.open_procs(), 0u);
  EXPECT_EQ(closed, (std::vector<const core::Proc*>{proc.get(), proc.get()}));
  registry_.set_close_observer({});
  registry_.remove_open(*proc);  // released already: nothing happens
  EXPECT_EQ(closed.size(), 2u);
}

// Reopening a file (/proc/self/fd/N) gives a second open of the same inode: the later one is what
// the file names, and the earlier one's release does not take that away.
TEST_F(DeviceRegistryTest, TheLaterOpenOfOneFileKeepsItWhenTheEarlierIsReleased) {
  add("binder");
  auto earlier = open("binder", 400), later = open("binder", 400);
  registry_.add_open(earlier, false, FileIdentity{7, 3000});
  registry_.add_open(later, false, FileIdentity{7, 3000});
  EXPECT_EQ(registry_.open_of({7, 3000}).proc, later);
  registry_.remove_open(*earlier);
  EXPECT_EQ(registry_.open_of({7, 3000}).proc, later);
}

}  // namespace
}  // namespace cused::devices

// core/security.h: the sender's security label delivered with BR_TRANSACTION_SEC_CTX (S4.9), from
// a fixed label or the host's LSM label (cused/host/proc_attr_label.h) with a fallback.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cused/host/proc_attr_label.h"
#include "cused/host/read_small_file.h"
#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

using host::ProcAttrLabel;
using host::read_small_file;

// S4.9: a node created with TXN_SECURITY_CTX gets BR_TRANSACTION_SEC_CTX with the sender's label.
class SecctxTest : public World {
 protected:
  SecctxTest() : World(DeviceOptions{{}, true, std::make_shared<FixedLabel>("u:r:test_app:s0")}) {}
  void SetUp() override {
    flat_binder_object fbo{};
    fbo.flags = FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
    ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR_EXT, fbo), 0);
    for (auto [c, tid] : {std::pair{&sm, kSmLooper}, {&client, kClientMain}}) warm(*c, tid);
  }
};
TEST_F(SecctxTest, SecurityContextIsDelivered_S4_9) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0, Parcel().u32(9)));
  Call incoming = read_now(sm, kSmLooper);
  ASSERT_EQ(incoming.names(), "BR_NOOP BR_TRANSACTION_SEC_CTX");
  binder_transaction_data_secctx tr = incoming.items()[1].tr_secctx();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(tr.secctx)), "u:r:test_app:s0");
  EXPECT_EQ(u32_at(tr.transaction_data), 9u);
  EXPECT_GE(tr.secctx, tr.transaction_data.data.ptr.offsets);
  write_ok(sm, kSmLooper, Commands().reply());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY") << "never for replies";
}

// S4.9: the default source takes the host LSM's label of the sender (here from a stand-in for
// /proc), read once per sender proc like the kernel's credentials captured at open.
class HostLabelTest : public World {
 protected:
  HostLabelTest() : World(options()) {}
  static DeviceOptions options() {
    DeviceOptions options;
    options.labels = std::make_shared<ProcAttrLabel>("fallback", root());
    return options;
  }
  static std::string root() {
    static const std::string dir = [] {
      char pattern[] = "/tmp/cused-attr-XXXXXX";
      std::string made = mkdtemp(pattern);
      std::filesystem::create_directories(made + "/" + std::to_string(kClient) + "/attr");
      return made;
    }();
    return dir;
  }
  static void set_label(const std::string& text) {
    std::ofstream(root() + "/" + std::to_string(kClient) + "/attr/current") << text;
  }
  void SetUp() override {
    flat_binder_object fbo{};
    fbo.flags = FLAT_BINDER_FLAG_TXN_SECURITY_CTX;
    ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR_EXT, fbo), 0);
    for (auto [c, tid] : {std::pair{&sm, kSmLooper}, {&client, kClientMain}}) warm(*c, tid);
  }
  std::string label_of_next_call() {
    client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
    Call incoming = read_now(sm, kSmLooper);
    binder_transaction_data_secctx tr = incoming.items().at(1).tr_secctx();
    std::string label(reinterpret_cast<const char*>(tr.secctx));
    write_ok(sm, kSmLooper, Commands().free_buffer(tr.transaction_data.data.ptr.buffer));
    return label;
  }
};
TEST_F(HostLabelTest, LabelFromAttrCurrentReadOncePerProc_S4_9) {
  set_label("u:r:host_app:s0\n");
  EXPECT_EQ(label_of_next_call(), "u:r:host_app:s0");
  set_label("changed\n");
  EXPECT_EQ(label_of_next_call(), "u:r:host_app:s0");
  std::filesystem::remove_all(root());
}

// The label source reads /proc/<pid>/attr/current when there is one and falls back otherwise.
TEST(SecurityLabel, ProcAttrFallsBackWithoutLsm_S4_9) {
  std::string label;
  ProcAttrLabel source("fallback", "/nonexistent");
  ASSERT_EQ(source.label(1, label), 0);
  EXPECT_EQ(label, std::string("fallback") + '\0');
}

// The same against this machine's real /proc: where no LSM provides attr/current its read fails
// (EINVAL), and that must give the fallback, not an exception out of the daemon's request
// handler (the crash of Android's servicemanager, which asks for sender contexts).
TEST(SecurityLabel, RealProcGivesTheHostLabelOrTheFallback_S4_9) {
  std::string host;
  bool readable = read_small_file("/proc/self/attr/current", host) == 0 && !host.empty();
  std::string label;
  ProcAttrLabel source("fallback");
  ASSERT_EQ(source.label(getpid(), label), 0);
  ASSERT_FALSE(label.empty());
  EXPECT_EQ(label.back(), '\0');
  if (!readable) {
    EXPECT_EQ(label, std::string("fallback") + '\0');
  }
}

}  // namespace
}  // namespace cused::core::test

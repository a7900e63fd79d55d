// SPDX-License-Identifier: GPL-2.0-only
// core/security.h: the sender's security label delivered with BR_TRANSACTION_SEC_CTX (S4.9), from
// the device's label source (the daemon's is the host LSM's, tested in tests/unit/host).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/unit/core/world.h"

namespace cused::core::test {
namespace {

// S4.9: a node created with TXN_SECURITY_CTX gets BR_TRANSACTION_SEC_CTX with the sender's label.
class SecctxTest : public World {
 protected:
  SecctxTest()
      : SecctxTest(DeviceOptions{{}, true, std::make_shared<FixedLabel>("u:r:test_app:s0")}) {}
  // The manager asks for labels (TXN_SECURITY_CTX); manager and client have their threads.
  explicit SecctxTest(DeviceOptions options) : World(std::move(options)) {}
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

// S4.9: a proc's label is asked for once, when it first sends, like the kernel's credentials
// captured at open: a source whose answer changes later (the daemon's reads /proc/<pid>/attr/
// current, tests/unit/host/proc_attr_label_test.cc) does not change what its receivers get.
class ChangingLabel final : public SecurityLabelSource {
 public:
  int label(pid_t, std::string& out) override {
    ++asked;
    return label_bytes(text, out);
  }
  std::string text = "u:r:host_app:s0";
  int asked = 0;
};

class LabelOnceTest : public SecctxTest {
 protected:
  LabelOnceTest() : LabelOnceTest(std::make_shared<ChangingLabel>()) {}
  explicit LabelOnceTest(std::shared_ptr<ChangingLabel> labels)
      : SecctxTest(options(labels)), labels_(std::move(labels)) {}
  static DeviceOptions options(std::shared_ptr<ChangingLabel> labels) {
    DeviceOptions options;
    options.labels = std::move(labels);
    return options;
  }
  std::string label_of_next_call() {
    client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
    Call incoming = read_now(sm, kSmLooper);
    binder_transaction_data_secctx tr = incoming.items().at(1).tr_secctx();
    std::string label(reinterpret_cast<const char*>(tr.secctx));
    write_ok(sm, kSmLooper, Commands().free_buffer(tr.transaction_data.data.ptr.buffer));
    return label;
  }
  const std::shared_ptr<ChangingLabel> labels_;
};
TEST_F(LabelOnceTest, LabelIsReadOncePerProc_S4_9) {
  EXPECT_EQ(label_of_next_call(), "u:r:host_app:s0");
  labels_->text = "changed";
  EXPECT_EQ(label_of_next_call(), "u:r:host_app:s0");
  EXPECT_EQ(labels_->asked, 1);
}

}  // namespace
}  // namespace cused::core::test

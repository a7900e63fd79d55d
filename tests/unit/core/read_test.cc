// Transaction flows across procs (S4.4-S4.10, S3.3, S3.5, TF_DEFER_COMPLETE) and their failure
// routing (S3.6, S4.6).
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

using FlowTest = World;

// S4.4: a call made while serving goes back to the thread of the target that waits for us (the
// caller's caller), not to an idle thread of that proc.
TEST_F(FlowTest, NestedCallGoesToTheWaitingThread_S4_4) {
  std::uint32_t client_handle = 0;
  {
    // The client gives the manager a handle to its own object.
    client.write_read(kClientOther,
                      Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(0x77, 0x78)));
    write_ok(client, kClientOther,
             Commands().done(BC_INCREFS_DONE, 0x77, 0x78).done(BC_ACQUIRE_DONE, 0x77, 0x78));
    binder_transaction_data tr = read_now(sm, kSmLooper).tr();
    client_handle = object_at<flat_binder_object>(tr, 0).handle;
    write_ok(sm, kSmLooper,
             Commands().ref(BC_ACQUIRE, client_handle).free_buffer(tr.data.ptr.buffer));
  }
  Call idle = client.read(kClientOther);  // an idle thread waiting for proc work
  ASSERT_FALSE(idle.done());
  Call outer = client.write_read(kClientMain, Commands().transaction(0, 10, 0));
  binder_transaction_data incoming = read_now(sm, kSmLooper).tr();
  ASSERT_EQ(incoming.code, 10u);

  Call nested = sm.write_read(kSmLooper, Commands().transaction(client_handle, 11, 0));
  EXPECT_FALSE(nested.done());
  ASSERT_TRUE(outer.done());
  EXPECT_EQ(outer.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION");
  EXPECT_EQ(outer.tr().code, 11u);
  EXPECT_FALSE(idle.done());

  // S3.5: a reply's completion is not deferred: the replier's read returns with it.
  Call replied = client.write_read(kClientMain, Commands().reply(0, Parcel().u32(5)));
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  ASSERT_TRUE(nested.done());
  EXPECT_EQ(nested.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  EXPECT_EQ(u32_at(nested.tr()), 5u);

  Call outer_reply = client.read(kClientMain);
  EXPECT_FALSE(outer_reply.done());
  write_ok(sm, kSmLooper, Commands().reply(0, Parcel().u32(6)));
  ASSERT_TRUE(outer_reply.done());
  EXPECT_EQ(outer_reply.names(), "BR_NOOP BR_REPLY");
  EXPECT_EQ(u32_at(outer_reply.tr()), 6u);
}

// S4.5: oneways to one node are delivered one at a time, FIFO, each released by the
// BC_FREE_BUFFER of the one before; a sync call overtakes them.
TEST_F(FlowTest, OnewaysToOneNodeAreSerializedByFree_S4_5) {
  for (std::uint32_t code = 1; code <= 3; code++)
    client.write_read(kClientMain, Commands().transaction(0, code, TF_ONE_WAY));
  Call sync = client.write_read(kClientOther, Commands().transaction(0, 99, 0));
  binder_transaction_data first = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(first.code, 1u);
  binder_transaction_data overtaking = read_now(sm, kSmOther).tr();
  EXPECT_EQ(overtaking.code, 99u);
  Call waiting = sm.read(kSmLooper);
  EXPECT_FALSE(waiting.done()) << "the next oneway waits for the free";
  write_ok(sm, kSmOther, Commands().free_buffer(first.data.ptr.buffer));
  ASSERT_TRUE(waiting.done());
  binder_transaction_data second = waiting.tr();
  EXPECT_EQ(second.code, 2u);
  write_ok(sm, kSmLooper, Commands().free_buffer(second.data.ptr.buffer));
  EXPECT_EQ(read_now(sm, kSmLooper).tr().code, 3u);
}

// S3.2 step 4: less than 76 bytes left ends the read, even for a 4-byte item.
TEST_F(FlowTest, ShortReadBufferReturnsOnlyNoop_S3_2) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));  // queues work
  Call small = sm.read(kSmLooper, 79);
  ASSERT_TRUE(small.done());
  EXPECT_EQ(small.names(), "BR_NOOP");
  Call enough = sm.read(kSmLooper, 80);
  EXPECT_EQ(enough.names(), "BR_NOOP BR_TRANSACTION");
}

// S3.2 step 6: at most one transaction per read.
TEST_F(FlowTest, OneTransactionPerRead_S3_2) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  client.write_read(kClientOther, Commands().transaction(0, 2, 0));
  Call first = sm.read(kSmLooper, 1024);
  EXPECT_EQ(first.names(), "BR_NOOP BR_TRANSACTION");
  Call second = sm.read(kSmOther, 1024);
  EXPECT_EQ(second.names(), "BR_NOOP BR_TRANSACTION");
}

// S1.11: a non-blocking read without work fails with EAGAIN and leaves read_consumed alone.
TEST_F(FlowTest, NonblockingReadWithoutWorkIsEagain_S1_11) {
  Call call = sm.read(kSmLooper, 256, /*nonblock=*/true);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EAGAIN);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
}

// S1.12: an interrupted parked read fails with EINTR; the write half was applied and reported.
TEST_F(FlowTest, InterruptedReadIsEintrAfterWrite_S1_12) {
  Call call = sm.write_read(kSmLooper, Commands().u32(BC_ENTER_LOOPER));
  ASSERT_FALSE(call.done());
  sm.interrupt(kSmLooper, call);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), -EINTR);
  EXPECT_EQ(call.bwr().write_consumed, 4u);
  EXPECT_EQ(call.bwr().read_consumed, 0u);
  // The interrupted thread is no longer waiting: work goes elsewhere, to the proc queue.
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  EXPECT_EQ(read_now(sm, kSmOther).names(), "BR_NOOP BR_TRANSACTION");
}

// S1.8: flush wakes parked readers, which return BR_NOOP only.
TEST_F(FlowTest, FlushWakesReadersWithNoop_S1_8) {
  Call call = sm.read(kSmLooper);
  ASSERT_FALSE(call.done());
  sm.proc().flush();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.result(), 0);
  EXPECT_EQ(call.names(), "BR_NOOP");
  EXPECT_FALSE(sm.read(kSmLooper).done()) << "need_return was cleared by the ioctl's end";
}

// S3.3 / S8.2 / S8.5: BR_SPAWN_LOOPER replaces the leading BR_NOOP when no thread waits for
// proc work, the pool is below max_threads and the reader is a looper; one request at a time.
TEST_F(FlowTest, SpawnLooperRules_S3_3) {
  std::uint32_t max = 2;
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_MAX_THREADS, max), 0);
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY));
  Call first = read_now(sm, kSmLooper);
  EXPECT_EQ(first.names(), "BR_NOOP BR_TRANSACTION") << "not a looper yet";
  write_ok(sm, kSmLooper, Commands().u32(BC_ENTER_LOOPER).free_buffer(first.tr().data.ptr.buffer));
  client.write_read(kClientMain, Commands().transaction(0, 2, TF_ONE_WAY));
  Call second = read_now(sm, kSmLooper);
  EXPECT_EQ(second.names(), "BR_SPAWN_LOOPER BR_TRANSACTION");
  EXPECT_EQ(sm.proc().counts().requested_threads, 1u);
  write_ok(sm, kSmLooper, Commands().free_buffer(second.tr().data.ptr.buffer));
  client.write_read(kClientMain, Commands().transaction(0, 3, TF_ONE_WAY));
  EXPECT_EQ(read_now(sm, kSmLooper).names(), "BR_NOOP BR_TRANSACTION")
      << "a request is outstanding";
  write_ok(sm, kSmOther, Commands().u32(BC_REGISTER_LOOPER));
  EXPECT_EQ(sm.proc().counts().requested_threads, 0u);
  EXPECT_EQ(sm.proc().counts().requested_threads_started, 1u);
}

// TF_DEFER_COMPLETE: the replier's completion waits with it for the next transaction, so one
// BINDER_WRITE_READ serves the reply and the wait; deferred thread work comes before proc work.
TEST_F(FlowTest, DeferCompleteKeepsReplierWaiting_TF_DEFER_COMPLETE) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  Call served = sm.write_read(
      kSmLooper,
      Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE, Parcel().u32(3)));
  EXPECT_FALSE(served.done()) << served.names();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_REPLY");
  Call next = client.write_read(
      kClientMain, Commands().free_buffer(call.tr().data.ptr.buffer).transaction(0, 2, TF_ONE_WAY));
  ASSERT_TRUE(served.done());
  EXPECT_EQ(served.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_TRANSACTION");
  EXPECT_EQ(served.tr().code, 2u);
}

// Without the device option the flag is passed through and ignored, as the kernel does.
class NoDeferTest : public World {
 protected:
  NoDeferTest() : World(DeviceOptions{{}, /*defer_complete=*/false, nullptr}) {}
};
TEST_F(NoDeferTest, DeferCompleteIgnoredWhenDisabled_TF_DEFER_COMPLETE) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  Call served = sm.write_read(
      kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE));
  ASSERT_TRUE(served.done());
  EXPECT_EQ(served.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(call.tr().flags, uapi::TF_DEFER_COMPLETE);  // S4.8: flags delivered unchanged
}

// docs/design.md section 5: a changed device variant applies to procs opened afterwards only.
TEST_F(FlowTest, OptionChangeAppliesToLaterProcs_TF_DEFER_COMPLETE) {
  env.device->set_options(DeviceOptions{{}, /*defer_complete=*/false, nullptr});
  EXPECT_FALSE(env.device->options().defer_complete);
  auto serve_once = [&](Client& server, pid_t tid) {
    Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
    binder_transaction_data tr = read_now(server, tid).tr();
    Call served = server.write_read(
        tid, Commands().free_buffer(tr.data.ptr.buffer).reply(uapi::TF_DEFER_COMPLETE));
    write_ok(client, kClientMain, Commands().free_buffer(call.tr().data.ptr.buffer));
    return served.done();
  };
  EXPECT_FALSE(serve_once(sm, kSmLooper)) << "the manager opened before keeps deferring";
  sm.release();
  Client later{env, 400};
  ASSERT_EQ(later.ioctl(401, BINDER_SET_CONTEXT_MGR), 0);
  warm(later, 401);
  EXPECT_TRUE(serve_once(later, 401)) << "a proc opened after the change does not";
}

// S3.6 "reply-side failure" / S4.6 / S1.7: a reply to a caller that never mapped its space: the
// replier hears its completion, the caller BR_DEAD_REPLY with the replier's error recorded.
TEST_F(FlowTest, ReplyToUnmappedCallerIsDeadReply_S4_6) {
  client.set_mapped(false);
  expect_reply_failure(Parcel().u32(1), BR_DEAD_REPLY, -ESRCH);
}

// S1.7 / S4.10: a call to a proc that has not mapped its space is BR_DEAD_REPLY -ESRCH.
TEST_F(FlowTest, CallToUnmappedTargetIsDeadReply_S1_7) {
  sm.set_mapped(false);
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  EXPECT_EQ(call.names(), "BR_NOOP BR_DEAD_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -ESRCH);
}

// S4.10 / S9.6: too big for the space is -ENOSPC; a oneway also has to fit half the space.
TEST_F(FlowTest, TooBigIsFailedReplyEnospc_S4_10) {
  Parcel big;
  big.data.resize(600 * 1024);
  Call oneway = client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, big));
  EXPECT_EQ(oneway.names(), "BR_NOOP BR_FAILED_REPLY");
  EXPECT_EQ(extended_error(client, kClientMain).param, -ENOSPC);
  Call sync = client.write_read(kClientMain, Commands().transaction(0, 1, 0, big));
  EXPECT_FALSE(sync.done()) << "a sync call may use the whole space";
  Parcel huge;
  huge.data.resize(2 * 1024 * 1024);
  Call too_big = client.write_read(kClientOther, Commands().transaction(0, 1, 0, huge));
  EXPECT_EQ(too_big.names(), "BR_NOOP BR_FAILED_REPLY");
}

// S3.6 "target dies while the call is queued": release turns it into BR_DEAD_REPLY (S1.9).
TEST_F(FlowTest, CallQueuedToReleasedProcGetsDeadReply_S1_9) {
  std::uint32_t handle = fetch(publish());
  Call call = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  ASSERT_FALSE(call.done());
  server.release();
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
  // S6.8: the node is dead now: a new call is BR_DEAD_REPLY at once.
  Call again = client.write_read(kClientMain, Commands().transaction(handle, 1, 0));
  EXPECT_EQ(again.names(), "BR_NOOP BR_DEAD_REPLY");
}

// S3.6 "target dies while serving": the serving thread's release fails the call (S2.6, S1.9).
TEST_F(FlowTest, CallBeingServedByExitingThreadGetsDeadReply_S2_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  read_now(sm, kSmLooper);
  ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_THREAD_EXIT), 0);
  ASSERT_TRUE(call.done());
  EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE BR_DEAD_REPLY");
  // The next ioctl of that tid is a brand-new thread: its first read returns at once.
  EXPECT_EQ(read_now(sm, kSmLooper).names(), "BR_NOOP");
}

// S4.6: the caller released while its call is served: the replier only hears its completion.
TEST_F(FlowTest, ReplyToReleasedCallerOnlyCompletes_S4_6) {
  Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  client.release();
  Call replied = sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply());
  EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
  EXPECT_EQ(extended_error(sm, kSmLooper).command, BR_OK);
}

// S4.7 / S5.3: fds in a reply to a caller that did not set TF_ACCEPT_FDS: replier completes,
// caller BR_FAILED_REPLY -EPERM.
TEST_F(FlowTest, FdInReplyWithoutAcceptFdsFailsTheCaller_S4_7) {
  expect_reply_failure(Parcel().fd(1), BR_FAILED_REPLY, -EPERM);
}

// S4.7 / S9.10: TF_CLEAR_BUF zeroes the buffer when it is freed.
TEST_F(FlowTest, ClearBufZeroesOnFree_S4_7) {
  Parcel parcel;
  parcel.data.assign(64, std::byte{0xab});
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY | TF_CLEAR_BUF, parcel));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  EXPECT_EQ(buffer_bytes(tr), parcel.data);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(buffer_bytes(tr), std::vector<std::byte>(64, std::byte{0}));
}

// S9.9 / S11.1: only a delivered buffer's exact start can be freed, and only once.
TEST_F(FlowTest, FreeBufferOnlyExactDeliveredOnce_S9_9) {
  client.write_read(kClientMain, Commands().transaction(0, 1, TF_ONE_WAY, Parcel().u64(1)));
  binder_transaction_data tr = read_now(sm, kSmLooper).tr();
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer + 8));
  EXPECT_EQ(sm.proc().counts().buffers, 1u);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));
  EXPECT_EQ(sm.proc().counts().buffers, 0u);
  write_ok(sm, kSmLooper, Commands().free_buffer(tr.data.ptr.buffer));  // a soft error
}

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

// SPDX-License-Identifier: GPL-2.0-only
// A small binder world for the engine tests: a context manager, a server that publishes objects
// through it and a client that fetches them, each a proc with warmed-up threads (S2.0: a new
// thread's first ioctl never waits, so every tid does one BINDER_VERSION first).
#pragma once

#include <gtest/gtest.h>

#include "tests/unit/core/harness.h"

namespace cused::core::test {

constexpr pid_t kSm = 100, kSmLooper = 101, kSmOther = 102;
constexpr pid_t kClient = 200, kClientMain = 201, kClientOther = 202;
constexpr pid_t kServer = 300, kServerLooper = 301, kServerOther = 302;

constexpr binder_uintptr_t kServicePtr = 0xa000, kServiceCookie = 0xc000;

inline std::uint32_t u32_at(const binder_transaction_data& tr, binder_size_t offset = 0) {
  return object_at<std::uint32_t>(tr, offset);
}

class CountingWaiter final : public PollWaiter {
 public:
  explicit CountingWaiter(std::shared_ptr<int> count) : count_(std::move(count)) {}
  void notify() override { ++*count_; }

 private:
  std::shared_ptr<int> count_;
};

class World : public ::testing::Test {
 protected:
  explicit World(DeviceOptions options = {}) : env(std::move(options)) {}

  void SetUp() override {
    ASSERT_EQ(sm.ioctl(kSmLooper, BINDER_SET_CONTEXT_MGR), 0);
    for (auto [client, tid] : {std::pair{&sm, kSmLooper},
                               {&sm, kSmOther},
                               {&client, kClientMain},
                               {&client, kClientOther},
                               {&server, kServerLooper},
                               {&server, kServerOther}})
      warm(*client, tid);
  }

  static void warm(Client& client, pid_t tid) {
    binder_version version{};
    ASSERT_EQ(client.ioctl(tid, BINDER_VERSION, version), 0);
  }
  static void write_ok(Client& client, pid_t tid, const Commands& commands) {
    Call call = client.write(tid, commands);
    ASSERT_TRUE(call.done());
    ASSERT_EQ(call.result(), 0);
    ASSERT_EQ(call.bwr().write_consumed, call.bwr().write_size);
  }
  // One read that must return at once.
  static Call read_now(Client& client, pid_t tid, std::size_t size = 256) {
    Call call = client.read(tid, size);
    EXPECT_TRUE(call.done()) << "read of " << tid << " parked";
    return call;
  }

  // The server sends its object (ptr, cookie) to the manager in a oneway; the manager keeps a
  // strong and a weak reference and frees the buffer; the server answers BR_INCREFS/BR_ACQUIRE.
  // Returns the manager's handle.
  std::uint32_t publish(binder_uintptr_t ptr = kServicePtr,
                        binder_uintptr_t cookie = kServiceCookie, std::uint32_t flags = 0) {
    Call sent = server.write_read(
        kServerLooper,
        Commands().transaction(0, 1, TF_ONE_WAY, Parcel().binder(ptr, cookie, flags)));
    EXPECT_EQ(sent.names(), "BR_NOOP BR_INCREFS BR_ACQUIRE BR_TRANSACTION_COMPLETE");
    write_ok(server, kServerLooper,
             Commands().done(BC_INCREFS_DONE, ptr, cookie).done(BC_ACQUIRE_DONE, ptr, cookie));
    return keep_handle(sm, kSmLooper, read_now(sm, kSmLooper).tr());
  }

  // The handle at the start of a delivered buffer: take strong and weak references, free it.
  static std::uint32_t keep_handle(Client& holder, pid_t tid, const binder_transaction_data& tr) {
    auto obj = object_at<flat_binder_object>(tr, 0);
    EXPECT_EQ(obj.hdr.type, BINDER_TYPE_HANDLE);
    write_ok(holder, tid,
             Commands()
                 .ref(BC_INCREFS, obj.handle)
                 .ref(BC_ACQUIRE, obj.handle)
                 .free_buffer(tr.data.ptr.buffer));
    return obj.handle;
  }

  // The client calls the manager, which replies with its handle `sm_handle`; the client keeps
  // strong and weak references. Returns the client's handle.
  std::uint32_t fetch(std::uint32_t sm_handle) {
    Call call = client.write_read(kClientMain, Commands().transaction(0, 2, 0));
    binder_transaction_data tr = read_now(sm, kSmLooper).tr();
    write_ok(sm, kSmLooper,
             Commands().free_buffer(tr.data.ptr.buffer).reply(0, Parcel().handle(sm_handle)));
    EXPECT_TRUE(call.done());
    return keep_handle(client, kClientMain, call.tr());
  }

  // S3.6 "reply-side failure": the client calls the manager, whose reply (`reply`) cannot reach
  // it. The replier only hears its completion and keeps a clean record; the caller gets
  // `caller_error` after its deferred completion, with the replier's errno recorded (S2.14).
  void expect_reply_failure(const Parcel& reply, std::uint32_t caller_error,
                            std::int32_t errno_value) {
    Call call = client.write_read(kClientMain, Commands().transaction(0, 1, 0));
    binder_transaction_data tr = read_now(sm, kSmLooper).tr();
    Call replied =
        sm.write_read(kSmLooper, Commands().free_buffer(tr.data.ptr.buffer).reply(0, reply));
    EXPECT_EQ(replied.names(), "BR_NOOP BR_TRANSACTION_COMPLETE");
    EXPECT_EQ(extended_error(sm, kSmLooper).command, BR_OK);
    ASSERT_TRUE(call.done());
    EXPECT_EQ(call.names(), "BR_NOOP BR_TRANSACTION_COMPLETE " + br_name(caller_error));
    binder_extended_error ee = extended_error(client, kClientMain);
    EXPECT_EQ(ee.command, caller_error);
    EXPECT_EQ(ee.param, errno_value);
  }

  binder_extended_error extended_error(Client& who, pid_t tid) {
    binder_extended_error ee{};
    EXPECT_EQ(who.ioctl(tid, BINDER_GET_EXTENDED_ERROR, ee), 0);
    return ee;
  }

  Env env;
  Client sm{env, kSm};
  Client client{env, kClient};
  Client server{env, kServer};
};

}  // namespace cused::core::test

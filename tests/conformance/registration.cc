// SPDX-License-Identifier: GPL-2.0-only
#include "tests/conformance/registration.h"

#include <gtest/gtest.h>

#include <vector>

namespace cused::conformance {

flat_binder_object LocalBinder(binder_uintptr_t ptr, binder_uintptr_t cookie) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_BINDER;
  object.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
  object.binder = ptr;
  object.cookie = cookie;
  return object;
}

flat_binder_object FdObject(int fd) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_FD;
  object.handle = static_cast<std::uint32_t>(fd);
  return object;
}

void FreeAndReply(const Endpoint& endpoint, const Return& txn, std::string_view data,
                  Commands before) {
  before.free_buffer(txn.txn.data.ptr.buffer).reply(kReplyCode, data);
  ASSERT_EQ(endpoint.write(before), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
  EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
}

void RegisterObjectWithManager(const Endpoint& owner, binder_uintptr_t ptr,
                               binder_uintptr_t cookie) {
  ASSERT_EQ(
      owner.write(Commands().transaction(0, kRegisterCode, "", 0, {{0, LocalBinder(ptr, cookie)}})),
      0);
  std::vector<Return> returns;
  ASSERT_TRUE(owner.read_until(BR_REPLY, returns));
  ASSERT_TRUE(HasCodes(returns, {BR_INCREFS, BR_ACQUIRE, BR_TRANSACTION_COMPLETE, BR_REPLY}));
  for (int i : {0, 1}) {
    EXPECT_EQ(returns[i].ptr_cookie.ptr, ptr);
    EXPECT_EQ(returns[i].ptr_cookie.cookie, cookie);
  }
  ASSERT_EQ(owner.write(Commands()
                            .ref_done(BC_INCREFS_DONE, ptr, cookie)
                            .ref_done(BC_ACQUIRE_DONE, ptr, cookie)
                            .free_buffer(returns[3].txn.data.ptr.buffer)),
            0);
}

std::uint32_t ReceiveRegisteredHandle(const Endpoint& manager, Return& txn) {
  EXPECT_TRUE(ReceiveTransaction(manager, txn));
  EXPECT_EQ(txn.txn.code, kRegisterCode);
  EXPECT_EQ(txn.txn.offsets_size, sizeof(binder_size_t));
  flat_binder_object object = txn.object_at(0);
  EXPECT_EQ(object.hdr.type, static_cast<std::uint32_t>(BINDER_TYPE_HANDLE));
  EXPECT_EQ(object.cookie, 0u);
  return object.handle;
}

}  // namespace cused::conformance

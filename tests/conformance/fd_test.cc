// SPDX-License-Identifier: GPL-2.0-only
// File descriptors in transactions (S5.3, S5.4, S5.6-S5.8): BINDER_TYPE_FD objects and
// BINDER_TYPE_FDA arrays, as libbinder's ParcelFileDescriptor and HIDL's native handles use
// them. The kernel and `cused run` pass them; cused's FUSE and CUSE paths cannot reach another
// process's descriptors and refuse them (docs/binderfs.md), so there these tests are skipped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "client/cused_differences.h"
#include "tests/conformance/command_stream.h"
#include "tests/conformance/device_path.h"
#include "tests/conformance/endpoint.h"
#include "tests/conformance/process_harness.h"
#include "tests/conformance/scenario.h"

namespace cused::conformance {
namespace {

constexpr std::uint32_t kReplyCode = 0x5f464452;

// "device:inode" of the file behind `fd`: the same in every process that has it open.
std::string FileIdentity(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return "closed";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}

bool IsOpen(int fd) { return fcntl(fd, F_GETFD) != -1; }

class Pipe {
 public:
  Pipe() { EXPECT_EQ(pipe2(fds_, O_CLOEXEC), 0); }
  ~Pipe() {
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  int read_end() const { return fds_[0]; }
  int write_end() const { return fds_[1]; }
  void close_write_end() {
    close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

flat_binder_object FdObject(int fd) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_FD;
  object.handle = static_cast<std::uint32_t>(fd);  // binder_fd_object's fd, at byte 8
  return object;
}

// A context manager whose node accepts fds (libbinder's BBinder default, S5.3).
Endpoint AcceptingManager() {
  Endpoint endpoint(DevicePath());
  flat_binder_object node{};
  node.flags = FLAT_BINDER_FLAG_ACCEPTS_FDS;
  EXPECT_TRUE(endpoint.become_context_manager(&node));
  EXPECT_EQ(endpoint.write(Commands().code(BC_ENTER_LOOPER)), 0);
  return endpoint;
}

// The manager's side of one call: `check` sees the transaction, then the buffer is freed and the
// reply carries what `check` returned.
void ServeOneCall(const Endpoint& endpoint,
                  const std::function<std::string(const Return&)>& check) {
  Return txn;
  ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
  std::string answer = check(txn);
  ASSERT_EQ(
      endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer).reply(kReplyCode, answer)), 0);
  std::vector<Return> returns;
  ASSERT_TRUE(endpoint.read(returns));
}

// The caller's side: sends `commands` (one call) and returns its reply's data.
std::string CallAndTakeReply(const Endpoint& endpoint, const Commands& commands) {
  EXPECT_EQ(endpoint.write(commands), 0);
  std::vector<Return> returns;
  EXPECT_TRUE(endpoint.read_until(BR_REPLY, returns));
  if (returns.empty() || returns.back().code != BR_REPLY) return "no reply";
  std::string data = returns.back().data();
  EXPECT_EQ(endpoint.write(Commands().free_buffer(returns.back().txn.data.ptr.buffer)), 0);
  return data;
}

// The manager runs `manager` in a process whose node accepts fds; the client runs `client`.
void AcceptingManagerAndClient(const std::function<void(const Endpoint&)>& manager,
                               const std::function<void(const Endpoint&)>& client) {
  Channel ready;
  Child manager_process([&] {
    Endpoint endpoint = AcceptingManager();
    ready.send(1);
    manager(endpoint);
  });
  Child client_process([&] {
    ASSERT_TRUE(ready.wait());
    Endpoint endpoint(DevicePath());
    client(endpoint);
  });
  EXPECT_TRUE(client_process.finish());
  EXPECT_TRUE(manager_process.finish());
}

// S5.3, S5.6: an FD object arrives as a new descriptor of the receiver, close-on-exec
// (binder_apply_fd_fixups' O_CLOEXEC), for the same open file as the sender's.
TEST(Fds, FdObjectArrivesAsANewCloexecDescriptorOfTheSameFile_S5_3_S5_6) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        ServeOneCall(endpoint, [](const Return& txn) {
          flat_binder_object object = txn.object_at(0);
          EXPECT_EQ(object.hdr.type, static_cast<std::uint32_t>(BINDER_TYPE_FD));
          int fd = static_cast<int>(object.handle);
          EXPECT_TRUE(IsOpen(fd));
          EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
          std::string identity = FileIdentity(fd);
          close(fd);  // the receiver owns it (S5.3)
          return identity;
        });
      },
      [&](const Endpoint& endpoint) {
        Pipe pipe;
        EXPECT_EQ(
            CallAndTakeReply(endpoint, Commands().transaction(0, kCallCode, "", 0,
                                                              {{0, FdObject(pipe.write_end())}})),
            FileIdentity(pipe.write_end()));
      });
}

// The sg layout of an FDA call: a PTR parent holding `fds`, then the FDA pointing into it.
struct FdArrayCall {
  explicit FdArrayCall(const std::vector<int>& fds) : slots(fds.begin(), fds.end()) {
    parent.hdr.type = BINDER_TYPE_PTR;
    parent.buffer = reinterpret_cast<binder_uintptr_t>(slots.data());
    parent.length = slots.size() * sizeof(std::uint32_t);
    array.hdr.type = BINDER_TYPE_FDA;
    array.num_fds = slots.size();
    array.parent = 0;  // the first object in the offsets array
    array.parent_offset = 0;
  }
  // A PTR at offset 0 cannot be a parent (the kernel's last_fixup_obj_off quirk): 8 bytes first.
  static constexpr std::size_t kParentAt = 8;
  std::vector<EmbeddedBytes> objects() const {
    return {EmbeddedBytes::Of(kParentAt, parent),
            EmbeddedBytes::Of(kParentAt + sizeof(parent), array)};
  }
  binder_size_t buffers_size() const { return (parent.length + 7) / 8 * 8; }

  std::vector<std::uint32_t> slots;
  binder_buffer_object parent{};
  binder_fd_array_object array{};
};

// The fds of an FDA as the receiver finds them: in its copy of the parent buffer.
std::vector<int> ReceivedArray(const Return& txn, std::size_t parent_at = FdArrayCall::kParentAt) {
  auto parent = txn.object_as<binder_buffer_object>(parent_at);
  auto array = txn.object_as<binder_fd_array_object>(parent_at + sizeof(parent));
  std::vector<int> fds(array.num_fds);
  std::memcpy(fds.data(), reinterpret_cast<const std::byte*>(parent.buffer) + array.parent_offset,
              fds.size() * sizeof(std::uint32_t));
  return fds;
}

// S5.4, S5.6: an FDA's fds are patched into the receiver's copy of the parent buffer, each a new
// descriptor of the sender's file.
TEST(Fds, FdArrayArrivesPatchedIntoItsParentBuffer_S5_4_S5_6) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        ServeOneCall(endpoint, [](const Return& txn) {
          std::string identities;
          for (int fd : ReceivedArray(txn)) identities += FileIdentity(fd) + " ";
          return identities;
        });
      },
      [&](const Endpoint& endpoint) {
        Pipe a, b, c;
        FdArrayCall call({a.write_end(), b.read_end(), c.write_end()});
        std::string expected = FileIdentity(a.write_end()) + " " + FileIdentity(b.read_end()) +
                               " " + FileIdentity(c.write_end()) + " ";
        EXPECT_EQ(CallAndTakeReply(endpoint,
                                   Commands().transaction_sg(0, kCallCode, "", 0, call.objects(),
                                                             call.buffers_size())),
                  expected);
      });
}

// S5.8, S5.4: BC_FREE_BUFFER closes the fds the driver installed for an FDA (deferred to the
// ioctl's return), never an FD object's, which the receiver owns. `cused run` cannot close a
// descriptor of another process: there the FDA's fds stay open (docs/run.md).
TEST(Fds, FreeBufferClosesFdArrayFdsButNotFdObjects_S5_8_S5_4) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        int single = static_cast<int>(txn.object_as<flat_binder_object>(0).handle);
        std::vector<int> array = ReceivedArray(txn, sizeof(flat_binder_object));
        ASSERT_EQ(array.size(), 2u);
        ASSERT_EQ(endpoint.write(Commands().free_buffer(txn.txn.data.ptr.buffer)), 0);
        EXPECT_TRUE(IsOpen(single)) << "an FD object's fd is the receiver's";
        if (!client::under_cused_run()) {
          for (int fd : array) EXPECT_FALSE(IsOpen(fd)) << "FDA fd " << fd;
        }
        ASSERT_EQ(endpoint.write(Commands().reply(kReplyCode, "freed")), 0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
      },
      [&](const Endpoint& endpoint) {
        Pipe a, b;
        FdArrayCall call({a.write_end(), b.write_end()});
        std::vector<EmbeddedBytes> objects{EmbeddedBytes::Of(0, FdObject(a.read_end()))};
        // The single FD object sits at 0, so the parent moves behind it.
        binder_buffer_object parent = call.parent;
        binder_fd_array_object array = call.array;
        array.parent = 1;
        objects.push_back(EmbeddedBytes::Of(sizeof(flat_binder_object), parent));
        objects.push_back(EmbeddedBytes::Of(sizeof(flat_binder_object) + sizeof(parent), array));
        EXPECT_EQ(CallAndTakeReply(endpoint, Commands().transaction_sg(0, kCallCode, "", 0, objects,
                                                                       call.buffers_size())),
                  "freed");
      });
}

// S4.7, S5.3: a reply may carry an fd to a caller that set TF_ACCEPT_FDS; and an fd received
// can be passed on: the manager sends the client's own file back, which arrives as another new
// descriptor of the same file.
TEST(Fds, ReplyCarriesAnFdBackToACallerThatAcceptsFds_S4_7_S5_3) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        Return txn;
        ASSERT_TRUE(ReceiveTransaction(endpoint, txn));
        int received = static_cast<int>(txn.object_at(0).handle);
        ASSERT_EQ(endpoint.write(Commands()
                                     .free_buffer(txn.txn.data.ptr.buffer)
                                     .reply(kReplyCode, "", 0, {{0, FdObject(received)}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_TRANSACTION_COMPLETE}));
        close(received);
      },
      [&](const Endpoint& endpoint) {
        Pipe pipe;
        ASSERT_EQ(endpoint.write(Commands().transaction(0, kCallCode, "", TF_ACCEPT_FDS,
                                                        {{0, FdObject(pipe.write_end())}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read_until(BR_REPLY, returns));
        ASSERT_EQ(returns.back().code, static_cast<std::uint32_t>(BR_REPLY));
        int back = static_cast<int>(returns.back().object_at(0).handle);
        EXPECT_NE(back, pipe.write_end());
        EXPECT_EQ(FileIdentity(back), FileIdentity(pipe.write_end()));
        EXPECT_EQ(endpoint.write(Commands().free_buffer(returns.back().txn.data.ptr.buffer)), 0);
      });
}

// S5.7: a transaction that fails after its fd was taken (a later object is a handle that does
// not exist) leaves no reference to the file anywhere: once the sender closes its copy, the
// pipe's reader sees end of file.
TEST(Fds, FdOfAFailedTransactionIsNotLeaked_S5_7) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  Channel sent;
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        ASSERT_TRUE(sent.wait());
        EXPECT_TRUE(endpoint.quiet_for()) << "the failed transaction was delivered";
      },
      [&](const Endpoint& endpoint) {
        Pipe pipe;
        flat_binder_object bad{};
        bad.hdr.type = BINDER_TYPE_HANDLE;
        bad.handle = 999;
        ASSERT_EQ(endpoint.write(Commands().transaction(
                      0, kCallCode, "", 0,
                      {{0, FdObject(pipe.write_end())}, {sizeof(flat_binder_object), bad}})),
                  0);
        std::vector<Return> returns;
        ASSERT_TRUE(endpoint.read(returns));
        EXPECT_TRUE(HasCodes(returns, {BR_NOOP, BR_FAILED_REPLY}));
        pipe.close_write_end();
        char byte;
        EXPECT_EQ(read(pipe.read_end(), &byte, 1), 0) << "someone still holds the write end";
        sent.send(1);
      });
}

// S5.3, S5.8: one parcel with 100 FD objects: 100 new descriptors, each of the right file.
TEST(Fds, HundredFdsInOneParcel_S5_3) {
  CUSED_SKIP_WITHOUT_FD_PASSING(DevicePath());
  constexpr int kFds = 100;
  AcceptingManagerAndClient(
      [&](const Endpoint& endpoint) {
        ServeOneCall(endpoint, [](const Return& txn) {
          std::string identities;
          for (int i = 0; i < kFds; ++i) {
            int fd = static_cast<int>(txn.object_at(i * sizeof(flat_binder_object)).handle);
            identities += FileIdentity(fd) + " ";
            close(fd);
          }
          return identities;
        });
      },
      [&](const Endpoint& endpoint) {
        std::vector<Pipe> pipes(kFds / 2);
        std::vector<EmbeddedObject> objects;
        std::string expected;
        for (int i = 0; i < kFds; ++i) {
          int fd = i % 2 ? pipes[i / 2].write_end() : pipes[i / 2].read_end();
          objects.push_back({i * sizeof(flat_binder_object), FdObject(fd)});
          expected += FileIdentity(fd) + " ";
        }
        EXPECT_EQ(CallAndTakeReply(endpoint, Commands().transaction(0, kCallCode, "", 0, objects)),
                  expected);
      });
}

}  // namespace
}  // namespace cused::conformance

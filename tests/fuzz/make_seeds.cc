// SPDX-License-Identifier: GPL-2.0-only
// Writes the fuzzer's seed corpus: the conformance scenarios (publish, fetch, call and reply,
// oneways, death notifications, nested calls) and one regression input per historical bug of
// spec S11, as scripts (tests/fuzz/script.h), and the fuzzer's dictionary.
// Usage: make-fuzz-seeds CORPUS_DIR [DICTIONARY]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "tests/fuzz/script.h"
#include "uapi/binder.h"

namespace cused::fuzz {
namespace {

constexpr int kSm = 0, kServer = 1, kClient = 2;
constexpr int kIncrefs = 0, kAcquire = 1, kRelease = 2, kDecrefs = 3;
constexpr std::uint8_t kNonblock = 1, kBlock = 0, kNoRead = 4;

// Manager, server and client; the server publishes ptr index 0 to the manager (handle 1 there),
// created with `node_flags`.
ScriptWriter world(std::uint8_t variant = 0, std::uint16_t node_flags = 0) {
  ScriptWriter w;
  w.open(kSm, 5, variant).context_mgr(kSm, 0).open(kServer, 5, variant).open(kClient, 5, variant);
  // server: oneway to the manager carrying its binder; answers BR_INCREFS / BR_ACQUIRE.
  w.write_read(kServer, 0, 1, kNonblock)
      .transaction(0, 0, 1, TF_ONE_WAY)
      .parcel(8, 1)
      .binder(0, 7, node_flags);
  w.write_read(kServer, 0, 2, kNoRead).ref_done(0).ref_done(1);
  // manager: takes the handle, keeps strong and weak refs, frees the buffer.
  w.read(kSm, 0, kNonblock);
  w.write_read(kSm, 0, 3, kNoRead).refcount(kIncrefs, 1).refcount(kAcquire, 1).free_delivered();
  return w;
}

// `slot`'s thread frees the buffer it was given and replies with one object (which follows).
ScriptWriter& free_and_reply_with_one(ScriptWriter& w, int slot, int thread,
                                      std::uint8_t read_mode) {
  return w.write_read(slot, thread, 2, read_mode)
      .free_delivered()
      .transaction(kTxnReply, 0, 0, 0)
      .parcel(0, 1);
}

// The client asks the manager (sync) and gets the handle back (its handle 1).
ScriptWriter& fetch(ScriptWriter& w) {
  w.write_read(kClient, 0, 1, kBlock).transaction(0, 0, 2, 0).parcel(4, 0);
  w.read(kSm, 0, kNonblock);
  free_and_reply_with_one(w, kSm, 0, kNonblock).handle(1);
  w.read(kClient, 0, kNonblock);
  w.write_read(kClient, 0, 3, kNoRead).refcount(kIncrefs, 1).refcount(kAcquire, 1).free_delivered();
  return w;
}

ScriptWriter fetched() {
  ScriptWriter w = world();
  return fetch(w);
}

// The client calls the server through handle 1; the server replies.
ScriptWriter& call(ScriptWriter& w, std::uint8_t flags = 0) {
  w.write_read(kClient, 1, 1, kBlock).transaction(0, 1, 3, flags).parcel(16, 0);
  w.read(kServer, 1, kNonblock);
  if (!(flags & TF_ONE_WAY))
    w.write_read(kServer, 1, 2, kNonblock)
        .free_delivered()
        .transaction(kTxnReply, 0, 0, 0)
        .parcel(8, 0);
  else
    w.write_read(kServer, 1, 1, kNoRead).free_delivered();
  w.read(kClient, 1, kNonblock);
  return w;
}

// The client sends the server a PTR buffer (`ptr_len8` * 8 bytes from its scratch memory) and an
// FDA of zero fds inside it (S5.4, S11.15); the server reads it.
ScriptWriter& send_ptr_and_fda(ScriptWriter& w, std::uint8_t data_bytes, std::uint8_t ptr_len8,
                               std::uint8_t extra8) {
  w.write_read(kClient, 0, 1, kBlock)
      .transaction(kTxnSg, 1, 4, TF_ACCEPT_FDS)
      .parcel(data_bytes, 2);
  w.obj(Obj::kPtr).u8(0).u8(ptr_len8).u8(0).u8(0);
  w.obj(Obj::kFda).u8(0).u8(0).u8(0);
  w.u8(extra8);  // extra buffers / 8
  return w.read(kServer, 0, kNonblock);
}

// Open variant bits (script.h): every proc has a file table (fds 0-15 open, room for 24); its
// frontend cannot close another process's fds.
constexpr std::uint8_t kFiles = 0x40, kNoClose = 0x80;

// world() with file tables and a server node that accepts fds, fetched by the client (handle 1).
ScriptWriter fd_world(std::uint8_t variant = kFiles) {
  ScriptWriter w = world(variant, FLAT_BINDER_FLAG_ACCEPTS_FDS);
  return fetch(w);
}

// Three oneways of three FD objects each to a server with room for 8 more fds: the third fails
// to install at its third fd (S5.6) and the two installed before are closed again.
ScriptWriter fd_overflow(std::uint8_t variant) {
  ScriptWriter w = fd_world(variant);
  for (int i = 0; i < 3; i++) {
    w.write_read(kClient, 1, 1, kNoRead).transaction(0, 1, 3, TF_ONE_WAY).parcel(0, 3);
    w.fd(1).fd(2).fd(3);
    w.read(kServer, 1, kNonblock).write_read(kServer, 1, 1, kNoRead).free_delivered();
  }
  // and a sync call of three fds, which cannot be installed either: BR_FAILED_REPLY to the client
  w.write_read(kClient, 1, 1, kBlock).transaction(0, 1, 3, 0).parcel(0, 3);
  w.fd(4).fd(5).fd(6);
  return w.read(kServer, 1, kNonblock);
}

using Seeds = std::map<std::string, std::function<ScriptWriter()>>;

Seeds conformance() {
  return {
      {"publish", [] { return world(); }},
      {"publish_spin_lazy", [] { return world(0x05); }},
      {"publish_nodefer_handoff", [] { return world(0x28); }},
      {"fetch",
       [] {
         auto w = world();
         return fetch(w);
       }},
      {"call_reply",
       [] {
         auto w = fetched();
         return call(w);
       }},
      {"call_defer_complete",
       [] {
         auto w = fetched();
         return call(w, uapi::TF_DEFER_COMPLETE);
       }},
      {"oneway",
       [] {
         auto w = fetched();
         return call(w, TF_ONE_WAY);
       }},
      {"death_on_close",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 1, kNoRead).cmd(Cmd::kDeath).u8(0).u8(1).u8(1);
         w.close(kServer).read(kClient, 0, kNonblock);
         w.write_read(kClient, 0, 1, kNonblock).cmd(Cmd::kDeadBinderDone).u8(0);
         return w;
       }},
      {"looper_threads",
       [] {
         auto w = world();
         w.op(Op::kIoctl).u8(kServer).u8(0).u8(1).u32(4);  // BINDER_SET_MAX_THREADS 4
         w.write_read(kServer, 1, 1, kNonblock).cmd(Cmd::kLooper).u8(1);
         w.write_read(kServer, 2, 1, kNonblock).cmd(Cmd::kLooper).u8(0);
         return call(fetch(w));
       }},
      {"parked_read_interrupt",
       [] {
         auto w = world();
         w.read(kClient, 3, kBlock).op(Op::kInterrupt).u8(kClient).u8(3);
         w.read(kServer, 3, kBlock).op(Op::kFlush).u8(kServer);
         return w;
       }},
      {"sg_ptr_fda",
       [] {
         auto w = world();
         return send_ptr_and_fda(fetch(w), 8, 4, 16);
       }},
      {"shrink_between_calls",
       [] {
         auto w = fetched();
         call(w);
         w.op(Op::kShrink).u8(0);
         return call(w);
       }},
      {"fd_call_reply",
       [] {
         // S5.3-S5.8: an FD object and an FDA of two fds in a PTR go to the server, whose reply
         // carries an fd back to the client (TF_ACCEPT_FDS); both free their buffers.
         auto w = fd_world();
         w.write_read(kClient, 1, 1, kBlock).transaction(kTxnSg, 1, 3, TF_ACCEPT_FDS).parcel(8, 3);
         w.fd(1);
         w.obj(Obj::kPtr).u8(0).u8(1).u8(0).u8(0);
         w.obj(Obj::kFda).u8(2).u8(1).u8(0);
         w.u8(1);  // extra buffers / 8
         w.read(kServer, 1, kNonblock);
         free_and_reply_with_one(w, kServer, 1, kNonblock).fd(2);
         w.read(kClient, 1, kNonblock);
         return w.write_read(kClient, 1, 1, kNoRead).free_delivered();
       }},
      {"fd_install_failure", [] { return fd_overflow(kFiles); }},
      {"fd_install_failure_no_close", [] { return fd_overflow(kFiles | kNoClose); }},
      {"fd_teardown",
       [] {
         // Files in flight when the target goes: a call, a oneway in the proc queue and one in
         // the node queue (S1.9); then a reply with an fd left to a caller thread that exits
         // (S2.6).
         auto w = fd_world();
         w.write_read(kClient, 1, 1, kBlock).transaction(0, 1, 3, 0).parcel(0, 1).fd(1);
         w.write_read(kClient, 2, 2, kNoRead)
             .transaction(0, 1, 4, TF_ONE_WAY)
             .parcel(0, 1)
             .fd(2)
             .transaction(0, 1, 5, TF_ONE_WAY)
             .parcel(0, 1)
             .fd(3);
         w.close(kServer);
         w.write_read(kClient, 3, 1, kNoRead).transaction(0, 0, 6, TF_ACCEPT_FDS).parcel(0, 0);
         w.read(kSm, 0, kNonblock);
         free_and_reply_with_one(w, kSm, 0, kNoRead).fd(5);
         return w.op(Op::kThreadExit).u8(kClient).u8(3);
       }},
      {"node_info_ioctls",
       [] {
         auto w = fetched();
         w.op(Op::kIoctl).u8(kClient).u8(0).u8(3).u32(1);  // GET_NODE_INFO_FOR_REF handle 1
         w.raw("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20);
         w.op(Op::kIoctl).u8(kServer).u8(0).u8(2);  // GET_NODE_DEBUG_INFO
         w.raw("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
         return w;
       }},
  };
}

// One input per S11 item, named s11_<n>_<what>.
Seeds regressions() {
  return {
      {"s11_01_free_undelivered_and_twice",
       [] {
         auto w = fetched();
         // a buffer the client never got, then one freed twice (S9.9)
         w.write_read(kClient, 1, 1, kNoRead).transaction(0, 1, 3, TF_ONE_WAY).parcel(8, 0);
         w.write_read(kServer, 1, 1, kNoRead).free_raw(0);
         w.read(kServer, 1, kNonblock);
         w.write_read(kServer, 1, 2, kNoRead).free_delivered().free_raw(0);
         return w;
       }},
      {"s11_02_offsets_overwrite",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 2, kNonblock)
             .transaction(0, 1, 3, 0)
             .parcel(8, 2, Damage::kPastEnd)
             .handle(1)
             .binder(1)
             .u8(1);
         w.transaction(0, 1, 3, 0).parcel(8, 2, Damage::kDescending).binder(2).handle(1);
         return w;
       }},
      {"s11_03_misaligned_offset",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 1, kNonblock)
             .transaction(kTxnSg, 1, 3, 0)
             .parcel(4, 2, Damage::kMisaligned)
             .handle(1);
         w.obj(Obj::kPtr).u8(0).u8(2).u8(0x80).u8(3).u8(3).u8(8);
         return w;
       }},
      {"s11_04_manager_ref_zero",
       [] {
         auto w = world();
         w.write_read(kSm, 0, 2, kNonblock).refcount(kAcquire, 0).refcount(kIncrefs, 0);
         return w;
       }},
      {"s11_05_desc_reuse_manager_restart",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 2, kNoRead).refcount(kRelease, 1).refcount(kDecrefs, 1);
         w.close(kSm).open(kSm, 5).context_mgr(kSm, 0);
         return fetch(w);
       }},
      {"s11_06_thread_exit_with_queued_work",
       [] {
         auto w = fetched();
         w.write_read(kClient, 2, 1, kNoRead).cmd(Cmd::kDeath).u8(0).u8(1).u8(2);
         w.write_read(kClient, 1, 1, kNoRead).transaction(0, 1, 3, 0).parcel(8, 0);
         w.close(kServer).op(Op::kThreadExit).u8(kClient).u8(1);
         w.op(Op::kThreadExit).u8(kClient).u8(2);
         return w.close(kClient);
       }},
      {"s11_07_poll_then_thread_exit",
       [] {
         auto w = world();
         w.op(Op::kPoll).u8(kClient).u8(1).op(Op::kThreadExit).u8(kClient).u8(1);
         return w.op(Op::kPoll).u8(kClient).u8(1).close(kClient);
       }},
      {"s11_08_ref_release_vs_death",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 1, kNoRead).cmd(Cmd::kDeath).u8(0).u8(1).u8(1);
         w.close(kServer);
         w.write_read(kClient, 0, 3, kNonblock)
             .refcount(kRelease, 1)
             .refcount(kDecrefs, 1)
             .cmd(Cmd::kDeath)
             .u8(1)
             .u8(1)
             .u8(1);
         return w.write_read(kClient, 0, 1, kNonblock).cmd(Cmd::kDeadBinderDone).u8(0);
       }},
      {"s11_09_munmap_while_peer_sends",
       [] {
         auto w = fetched();
         w.op(Op::kUnmap).u8(kServer);
         call(w);
         return call(w, TF_ONE_WAY);
       }},
      {"s11_10_shrink_vs_install",
       [] {
         auto w = fetched();
         for (int i = 0; i < 4; i++) {
           w.write_read(kClient, 1, 1, kNoRead).transaction(0, 1, 3, TF_ONE_WAY).parcel(63, 0);
           w.op(Op::kShrink).u8(1);
         }
         w.read(kServer, 1, kNonblock).op(Op::kShrink).u8(0);
         return w.write_read(kServer, 1, 2, kNonblock).free_delivered().free_delivered();
       }},
      {"s11_11_empty_oneway_budget",
       [] {
         auto w = fetched();
         for (int i = 0; i < 20; i++) {
           w.write_read(kClient, 1, 1, kNoRead).transaction(0, 1, 3, TF_ONE_WAY).parcel(0, 0);
           w.read(kServer, 1, kNonblock).write_read(kServer, 1, 1, kNoRead).free_delivered();
         }
         return w;
       }},
      {"s11_12_partial_translation_cleanup",
       [] {
         auto w = fetched();
         // the 3rd object fails (handle 5 does not exist): the first two must be undone exactly
         w.write_read(kClient, 0, 1, kNonblock)
             .transaction(0, 1, 3, 0)
             .parcel(0, 3)
             .binder(2)
             .handle(1)
             .handle(5);
         return w;
       }},
      {"s11_13_freeze_notification_teardown",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 1, kNonblock).cmd(Cmd::kFreeze).u8(0).u8(1).u8(1);
         w.close(kServer);
         w.write_read(kClient, 0, 2, kNonblock)
             .cmd(Cmd::kFreeze)
             .u8(1)
             .u8(1)
             .u8(1)
             .cmd(Cmd::kFreeze)
             .u8(2)
             .u8(1)
             .u8(1);
         return w.close(kClient);
       }},
      {"s11_14_size_overflows",
       [] {
         auto w = fetched();
         w.write_read(kClient, 0, 3, kNonblock)
             .transaction(0, 1, 3, 0)
             .parcel(8, 1, Damage::kHugeSizes)
             .handle(1);
         w.transaction(kTxnSg, 1, 3, 0).parcel(8, 1, Damage::kOddOffsetsSize).handle(1).u8(0xff);
         w.transaction(0, 1, 3, 0).parcel(8, 1, Damage::kBadDataPointer).handle(1);
         return w;
       }},
      {"s11_15_fda_zero_fds",
       [] {
         auto w = world();
         send_ptr_and_fda(fetch(w), 0, 2, 2);
         return w.write_read(kServer, 0, 2, kNonblock)
             .free_delivered()
             .transaction(kTxnReply, 0, 0, 0)
             .parcel(0, 0);
       }},
  };
}

// libFuzzer dictionary: the BC_ / BR_ codes, object types and ioctl numbers as the little-endian
// words the script's raw commands and raw ioctls carry.
void write_dictionary(const std::filesystem::path& path) {
  const std::map<std::string, std::uint32_t> words = {
      {"BC_TRANSACTION", BC_TRANSACTION},
      {"BC_REPLY", BC_REPLY},
      {"BC_ACQUIRE_RESULT", BC_ACQUIRE_RESULT},
      {"BC_FREE_BUFFER", BC_FREE_BUFFER},
      {"BC_INCREFS", BC_INCREFS},
      {"BC_ACQUIRE", BC_ACQUIRE},
      {"BC_RELEASE", BC_RELEASE},
      {"BC_DECREFS", BC_DECREFS},
      {"BC_INCREFS_DONE", BC_INCREFS_DONE},
      {"BC_ACQUIRE_DONE", BC_ACQUIRE_DONE},
      {"BC_ATTEMPT_ACQUIRE", BC_ATTEMPT_ACQUIRE},
      {"BC_REGISTER_LOOPER", BC_REGISTER_LOOPER},
      {"BC_ENTER_LOOPER", BC_ENTER_LOOPER},
      {"BC_EXIT_LOOPER", BC_EXIT_LOOPER},
      {"BC_REQUEST_DEATH_NOTIFICATION", BC_REQUEST_DEATH_NOTIFICATION},
      {"BC_CLEAR_DEATH_NOTIFICATION", BC_CLEAR_DEATH_NOTIFICATION},
      {"BC_DEAD_BINDER_DONE", BC_DEAD_BINDER_DONE},
      {"BC_TRANSACTION_SG", BC_TRANSACTION_SG},
      {"BC_REPLY_SG", BC_REPLY_SG},
      {"BC_REQUEST_FREEZE_NOTIFICATION", uapi::BC_REQUEST_FREEZE_NOTIFICATION},
      {"BC_CLEAR_FREEZE_NOTIFICATION", uapi::BC_CLEAR_FREEZE_NOTIFICATION},
      {"BC_FREEZE_NOTIFICATION_DONE", uapi::BC_FREEZE_NOTIFICATION_DONE},
      {"BR_TRANSACTION", BR_TRANSACTION},
      {"BR_REPLY", BR_REPLY},
      {"BR_DEAD_BINDER", BR_DEAD_BINDER},
      {"BR_INCREFS", BR_INCREFS},
      {"BR_ACQUIRE", BR_ACQUIRE},
      {"BINDER_TYPE_BINDER", BINDER_TYPE_BINDER},
      {"BINDER_TYPE_WEAK_BINDER", BINDER_TYPE_WEAK_BINDER},
      {"BINDER_TYPE_HANDLE", BINDER_TYPE_HANDLE},
      {"BINDER_TYPE_WEAK_HANDLE", BINDER_TYPE_WEAK_HANDLE},
      {"BINDER_TYPE_FD", BINDER_TYPE_FD},
      {"BINDER_TYPE_FDA", BINDER_TYPE_FDA},
      {"BINDER_TYPE_PTR", BINDER_TYPE_PTR},
      {"BINDER_WRITE_READ", BINDER_WRITE_READ},
      {"BINDER_SET_CONTEXT_MGR", BINDER_SET_CONTEXT_MGR},
      {"BINDER_THREAD_EXIT", BINDER_THREAD_EXIT},
      {"BINDER_FREEZE", BINDER_FREEZE},
      {"BINDER_GET_EXTENDED_ERROR", BINDER_GET_EXTENDED_ERROR},
  };
  std::ofstream out(path);
  for (const auto& [name, value] : words) {
    out << name << "=\"";
    for (int i = 0; i < 4; i++) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", (value >> (8 * i)) & 0xff);
      out << hex;
    }
    out << "\"\n";
  }
}

int write_all(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int written = 0;
  for (const Seeds& seeds : {conformance(), regressions()}) {
    for (const auto& [name, make] : seeds) {
      ScriptWriter w = make();
      std::ofstream out(dir / name, std::ios::binary);
      out.write(reinterpret_cast<const char*>(w.bytes.data()),
                static_cast<std::streamsize>(w.bytes.size()));
      written++;
    }
  }
  std::printf("%d seeds written to %s\n", written, dir.c_str());
  return 0;
}

}  // namespace
}  // namespace cused::fuzz

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [DICTIONARY]\n", argv[0]);
    return 2;
  }
  if (argc == 3) cused::fuzz::write_dictionary(argv[2]);
  return cused::fuzz::write_all(argv[1]);
}

// SPDX-License-Identifier: GPL-2.0-only
// One fuzz input is a script over several procs and their threads (issue 8, docs/design.md section
// 7): open with a mapping size, close, become context manager, BINDER_WRITE_READ with a command
// stream (well-formed transactions with object arrays, refcount and death commands, or raw
// bytes), reads that park, thread exit, flush, interrupt, poll, munmap, other ioctls with
// arbitrary arguments, and "shrink now". The script drives core in-process through an arena
// UserMemory; after every step core's invariants must hold, and after the last step every proc
// is closed and must leave nothing behind. A proc opened with variant bit 6 is served with a fake
// file table (tests/fake_files.h: fds 0-15 open, room for 24, so installs fail once it fills;
// bit 7: close() is refused with ENOSYS), so FD and FDA objects travel; every PassedFile alive
// must be one core holds for an undelivered transaction, and none may be left at the end.
//
// The byte format is what ScriptWriter emits and ScriptRunner reads; a reader past the end sees
// zeros, so every byte string is a valid script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/alloc/variant.h"

namespace cused::fuzz {

enum class Op : std::uint8_t {
  kOpen,        // slot, space index (kSpaces), variant byte (bit 6: file table, bit 7: no close)
  kClose,       // slot
  kContextMgr,  // slot, thread
  kWriteRead,   // slot, thread, read mode, command count, commands...
  kRead,        // slot, thread, read mode
  kThreadExit,  // slot, thread
  kFlush,       // slot
  kInterrupt,   // slot, thread
  kPoll,        // slot, thread
  kShrink,      // pages (0: all)
  kUnmap,       // slot
  kIoctl,       // slot, thread, ioctl index (kIoctls), argument bytes (the ioctl's size)
  kCount
};

enum class Cmd : std::uint8_t {
  kTransaction,  // mode bits (kReply, kSg), handle, code, flags, parcel
  kFreeBuffer,   // index (< 0xf0: a delivered buffer, or 0 when none; else a raw u64 follows)
  kRefcount,     // which (BC_INCREFS + n % 4), handle
  kRefDone,      // which (INCREFS_DONE / ACQUIRE_DONE), 0: oldest request (0xff: raw ptr, cookie)
  kLooper,       // BC_REGISTER_LOOPER + n % 3
  kDeath,        // request / clear, handle, cookie
  kDeadBinderDone,  // 0: oldest delivered death (0xff: raw cookie follows)
  kFreeze,          // request / clear / done, handle, cookie
  kRaw,             // u32 command, length, bytes
  kCount
};

// Parcel objects. kGarbage adds an offset that points at plain data.
enum class Obj : std::uint8_t {
  kBinder,      // ptr index, cookie, flags (u16)
  kWeakBinder,  // ptr index, cookie
  kHandle,      // handle
  kWeakHandle,  // handle
  kFd,          // fd (0-15 are open in a slot with a file table)
  kFda,         // num_fds, parent, parent_offset
  kPtr,         // where (0: scratch, 1: bogus, 2: client buffer space), length/8, parent, offset
  kGarbage,     // offset
  kCount
};

// Parcel corruptions (S4.11, S11.2, S11.3, S11.14).
enum class Damage : std::uint8_t {
  kNone,
  kMisaligned,      // one offset +1..7
  kPastEnd,         // an extra offset past data_size
  kDescending,      // offsets reversed
  kOddOffsetsSize,  // offsets_size not a multiple of 8
  kBadDataPointer,  // data.ptr.buffer unmapped: EFAULT
  kHugeSizes,       // data_size near 2^64 (S4.10 overflow)
  kCount
};

inline constexpr std::uint8_t kTxnReply = 1, kTxnSg = 2;
inline constexpr int kSlots = 4;
inline constexpr int kThreads = 4;

// Builds script bytes: the seed corpus (tests/fuzz/make_seeds.cc) and regression inputs.
class ScriptWriter {
 public:
  ScriptWriter& op(Op op) { return u8(static_cast<std::uint8_t>(op)); }
  ScriptWriter& cmd(Cmd cmd) { return u8(static_cast<std::uint8_t>(cmd)); }
  ScriptWriter& obj(Obj obj) { return u8(static_cast<std::uint8_t>(obj)); }
  ScriptWriter& u8(std::uint8_t value) {
    bytes.push_back(value);
    return *this;
  }
  ScriptWriter& u16(std::uint16_t value) { return raw(&value, sizeof value); }
  ScriptWriter& u32(std::uint32_t value) { return raw(&value, sizeof value); }
  ScriptWriter& u64(std::uint64_t value) { return raw(&value, sizeof value); }
  ScriptWriter& raw(const void* data, std::size_t len);

  // Common steps. `space` indexes kSpaces (1: one page ... 5: 1 MiB - 8 KiB; 0: never mapped).
  ScriptWriter& open(int slot, int space = 4, std::uint8_t variant = 0) {
    return op(Op::kOpen).u8(slot).u8(space).u8(variant);
  }
  ScriptWriter& close(int slot) { return op(Op::kClose).u8(slot); }
  ScriptWriter& context_mgr(int slot, int thread) {
    return op(Op::kContextMgr).u8(slot).u8(thread);
  }
  // A BINDER_WRITE_READ of `count` commands that follow; read mode: bit 0 nonblock, bit 1 small
  // read buffer, bit 2 no read at all.
  ScriptWriter& write_read(int slot, int thread, int count, std::uint8_t read_mode = 1) {
    return op(Op::kWriteRead).u8(slot).u8(thread).u8(read_mode).u8(count);
  }
  ScriptWriter& read(int slot, int thread, std::uint8_t read_mode = 0) {
    return op(Op::kRead).u8(slot).u8(thread).u8(read_mode);
  }
  // A transaction or reply header; follow with parcel().
  ScriptWriter& transaction(std::uint8_t mode, std::uint8_t handle, std::uint8_t code,
                            std::uint8_t flags) {
    return cmd(Cmd::kTransaction).u8(mode).u8(handle).u8(code).u8(flags);
  }
  // Parcel header: raw data bytes, object count, damage; follow with `objects` objects, then
  // (for kSg) the extra buffers size / 8.
  ScriptWriter& parcel(std::uint8_t data_bytes, std::uint8_t objects,
                       Damage damage = Damage::kNone) {
    u8(data_bytes);
    for (std::uint8_t i = 0; i < data_bytes; i++) u8(0x41 + i);
    return u8(objects).u8(static_cast<std::uint8_t>(damage));
  }
  ScriptWriter& binder(std::uint8_t ptr_index, std::uint8_t cookie = 7, std::uint16_t flags = 0) {
    return obj(Obj::kBinder).u8(ptr_index).u8(cookie).u16(flags);
  }
  ScriptWriter& handle(std::uint8_t handle) { return obj(Obj::kHandle).u8(handle); }
  ScriptWriter& fd(std::uint8_t fd) { return obj(Obj::kFd).u8(fd); }
  ScriptWriter& free_delivered(std::uint8_t index = 0) { return cmd(Cmd::kFreeBuffer).u8(index); }
  ScriptWriter& free_raw(std::uint64_t address) {
    return cmd(Cmd::kFreeBuffer).u8(0xff).u64(address);
  }
  ScriptWriter& refcount(int which, std::uint8_t handle) {
    return cmd(Cmd::kRefcount).u8(which).u8(handle);
  }
  // Answers the oldest BR_INCREFS (which 0) or BR_ACQUIRE (which 1) this proc has not answered.
  ScriptWriter& ref_done(int which) { return cmd(Cmd::kRefDone).u8(which).u8(0); }

  std::vector<std::uint8_t> bytes;
};

// Where a script ran into a broken rule; empty when none.
struct Outcome {
  std::vector<std::string> violations;
  std::size_t steps = 0;
  std::size_t delivered = 0;  // BR_TRANSACTION / BR_REPLY seen
};

// Runs one script on a fresh driver and device; never throws.
Outcome run_script(std::span<const std::uint8_t> input);

// Every proc the scripts open from now on uses `lock` as its allocator design, whatever the
// script's bits pick (the fuzzers' CUSED_FUZZ_DESIGN, e.g. a kernel design:
// docs/kernel-designs.md).
void pin_design(core::alloc::LockVariant lock);

}  // namespace cused::fuzz

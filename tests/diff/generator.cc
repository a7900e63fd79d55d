// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/generator.h"

#include <algorithm>
#include <array>
#include <random>

#include "tests/diff/step_decoder.h"
#include "tests/fuzz/script.h"
#include "tests/fuzz/script_input.h"
#include "uapi/binder.h"

namespace cused::diff {

namespace {

using fuzz::Cmd;
using fuzz::Obj;
using fuzz::Op;
using fuzz::ScriptWriter;

constexpr std::uint8_t kNoRead = 4;
constexpr int kManager = 0;

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : random_(seed) {}

  std::vector<std::uint8_t> script(int actions) {
    world();
    for (int i = 0; i < actions; i++) action();
    return std::move(w_.bytes);
  }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }
  bool chance(int percent) { return pick(100) < percent; }
  // A live slot: a dead one's commands are not read (S1.9), so bytes written for them would
  // be read as the next steps. Slot 0 never dies.
  int slot() {
    for (;;) {
      int s = pick(fuzz::kSlots);
      if (open_[s]) return s;
    }
  }
  int thread() { return pick(3); }  // thread 3 stays for rare use
  std::uint8_t handle() { return chance(90) ? pick(4) : pick(6); }
  std::uint8_t read_mode() {
    int r = pick(10);
    return r < 6 ? 0 : r < 8 ? kNoRead : static_cast<std::uint8_t>(2 | (pick(8) << 3));
  }

  // Four procs, slot 0 the context manager; 1 and 2 publish a node to it with a oneway, and
  // the manager keeps refs on both (handles 1 and 2 there).
  void world() {
    w_.open(kManager, 5, 0).context_mgr(kManager, 0);
    for (int s = 1; s < fuzz::kSlots; s++) w_.open(s, chance(80) ? 5 : 1 + pick(5), chance(20));
    open_.fill(true);
    for (int s = 1; s <= 2; s++) {
      w_.write_read(s, 0, 1, kNoRead).transaction(0, 0, 1, TF_ONE_WAY).parcel(8, 1);
      w_.binder(s - 1, 7, chance(50) ? FLAT_BINDER_FLAG_ACCEPTS_FDS : 0);
      w_.read(kManager, 0, 0);
      w_.write_read(kManager, 0, 3, kNoRead).refcount(0, s).refcount(1, s).free_delivered();
      w_.write_read(s, 0, 2, 0).ref_done(0).ref_done(1);
    }
  }

  void action() {
    switch (pick(20)) {
      case 0:
      case 1:
      case 2:
      case 3:
        return call();
      case 4:
      case 5:
        return reply();
      case 6:
      case 7:
      case 8:
        return w_.read(slot(), thread(), read_mode()), void();
      case 9:
        return commands();
      case 10:
        return death();
      case 11:
        return answer_follow_ups();
      case 12:
        if (chance(30)) return kill_and_reopen();
        return commands();
      case 13:
        return w_.op(Op::kThreadExit).u8(slot()).u8(thread()), void();
      case 14:
        return w_.op(Op::kInterrupt).u8(slot()).u8(thread()), void();
      case 15:
        return w_.op(Op::kFlush).u8(slot()), void();
      case 16:
        return chance(60) ? freeze() : ioctl();
      case 17:
        return w_.op(Op::kPoll).u8(slot()).u8(thread()), void();
      case 18:
        return looper();
      default:
        return nested();
    }
  }

  // A parcel's objects: nodes, handles, fds, a PTR with an FDA in it.
  void objects(int count) {
    for (int i = 0; i < count; i++) {
      switch (pick(6)) {
        case 0:
          w_.binder(pick(4), pick(4), chance(30) ? FLAT_BINDER_FLAG_ACCEPTS_FDS : 0);
          break;
        case 1:
          w_.obj(Obj::kWeakBinder).u8(pick(4)).u8(pick(4));
          break;
        case 2:
          w_.handle(handle());
          break;
        case 3:
          w_.obj(Obj::kWeakHandle).u8(handle());
          break;
        case 4:
          w_.fd(chance(90) ? pick(16) : 16 + pick(8));
          break;
        default:
          w_.obj(Obj::kPtr).u8(0).u8(1 + pick(4)).u8(0).u8(0);
          break;
      }
    }
  }

  void transaction(std::uint8_t mode, std::uint8_t flags) {
    w_.transaction(mode, handle(), pick(4), flags);
    int count = chance(50) ? 0 : 1 + pick(3);
    auto damage = chance(90)
                      ? fuzz::Damage::kNone
                      : static_cast<fuzz::Damage>(pick(static_cast<int>(fuzz::Damage::kCount)));
    w_.parcel(8 * pick(4), count, damage);
    objects(count);
    // The damages that read a parameter byte (tests/fuzz/command_encoder.cc): a misaligned
    // offset needs an object to misalign.
    if (damage == fuzz::Damage::kPastEnd || (damage == fuzz::Damage::kMisaligned && count > 0))
      w_.u8(pick(4));
    if (mode & fuzz::kTxnSg) w_.u8(pick(8));
  }

  void call() {
    std::uint8_t flags = chance(40) ? TF_ONE_WAY : 0;
    if (chance(20)) flags |= TF_ACCEPT_FDS;
    w_.write_read(slot(), thread(), 1, chance(60) ? read_mode() : kNoRead);
    transaction(chance(15) ? fuzz::kTxnSg : 0, flags);
  }

  void reply() {
    w_.write_read(slot(), thread(), 2, read_mode()).free_delivered(pick(3));
    transaction(static_cast<std::uint8_t>(fuzz::kTxnReply | (chance(15) ? fuzz::kTxnSg : 0)), 0);
  }

  // A thread serving a call calls out again before it replies.
  void nested() {
    int s = slot(), t = thread();
    w_.read(s, t, 0);
    w_.write_read(s, t, 1, 0);
    transaction(0, 0);
    w_.write_read(s, t, 1, kNoRead);
    transaction(fuzz::kTxnReply, 0);
  }

  void refcount_command() {
    switch (pick(6)) {
      case 4:  // freeze notifications (S8): request, clear, done
        w_.cmd(Cmd::kFreeze).u8(pick(3)).u8(handle()).u8(pick(4));
        break;
      case 5:
        if (chance(80)) {
          w_.ref_done(pick(2));
        } else {  // the commands no driver supports: BC_ATTEMPT_ACQUIRE, BC_ACQUIRE_RESULT
          w_.cmd(Cmd::kRaw).u32(chance(50) ? BC_ATTEMPT_ACQUIRE : BC_ACQUIRE_RESULT).u8(8);
          w_.u64(0);
        }
        break;
      case 0:
        w_.refcount(pick(4), handle());
        break;
      case 1:
        w_.ref_done(pick(2));
        break;
      case 2:
        w_.free_delivered(pick(3));
        break;
      default:
        w_.cmd(Cmd::kDeadBinderDone).u8(0);
        break;
    }
  }

  void commands() {
    int count = 1 + pick(4);
    w_.write_read(slot(), thread(), count, read_mode());
    for (int i = 0; i < count; i++) refcount_command();
  }

  void death() {
    w_.write_read(slot(), thread(), 1, chance(50) ? kNoRead : 0);
    w_.cmd(Cmd::kDeath).u8(chance(25)).u8(handle()).u8(pick(4));
  }

  void answer_follow_ups() {
    w_.write_read(slot(), thread(), 3, read_mode()).ref_done(0).ref_done(1).free_delivered();
  }

  void looper() { w_.write_read(slot(), thread(), 1, read_mode()).cmd(Cmd::kLooper).u8(pick(3)); }

  // A proc dies with work in flight and a new one takes its slot (S1.9, S7).
  void kill_and_reopen() {
    int s = 1 + pick(fuzz::kSlots - 1);
    w_.close(s);
    open_[s] = chance(70);
    if (open_[s]) w_.open(s, 5, chance(20));
  }

  void ioctl() {
    std::uint8_t which = pick(static_cast<int>(fuzz::kIoctls.size()));  // every ioctl of S0.1
    w_.op(Op::kIoctl).u8(slot()).u8(thread()).u8(which);
    // Small arguments: a thread count, a node pointer, a handle; exactly the ioctl's size.
    std::size_t size = _IOC_SIZE(fuzz::kIoctls[which]);
    for (std::size_t i = 0; i < size; i++)
      w_.u8(i == 0 ? pick(6) : i < 4 || chance(90) ? 0 : pick(256));
  }

  // A proc freezes or thaws a slot's proc, maybe itself, or asks how it stands (S2.10, S2.11);
  // the coordinator writes the slot's pid for kSlotPid + slot.
  void freeze() {
    bool ask = chance(35);
    unsigned cmd = ask ? BINDER_GET_FROZEN_INFO : BINDER_FREEZE;
    auto which = std::find(fuzz::kIoctls.begin(), fuzz::kIoctls.end(), cmd) - fuzz::kIoctls.begin();
    w_.op(Op::kIoctl).u8(slot()).u8(thread()).u8(static_cast<std::uint8_t>(which));
    w_.u32(kSlotPid + (chance(40) ? kManager : pick(fuzz::kSlots)));  // most calls go to 0
    if (ask) {
      w_.u32(0).u32(0);
    } else {  // enable, then a wait for outstanding calls (S2.10: EAGAIN if any stay)
      w_.u32(chance(55)).u32(chance(25) ? 20 : 0);
    }
  }

  std::mt19937_64 random_;
  ScriptWriter w_;
  std::array<bool, fuzz::kSlots> open_{};
};

}  // namespace

std::vector<std::uint8_t> generate_script(std::uint64_t seed, int actions) {
  return Generator(seed).script(actions);
}

}  // namespace cused::diff

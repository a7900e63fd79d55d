// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/step_decoder.h"

#include <array>

#include "tests/fuzz/command_encoder.h"

namespace cused::diff {

namespace {

using fuzz::Op;

void skip_commands(fuzz::ScriptInput& in, int count) {
  fuzz::ClientMemory memory(0);  // how many bytes commands take does not depend on where
  client::FollowUps owed;
  fuzz::CommandEncoder encoder(memory, owed, 0);
  std::vector<std::byte> ignored;
  for (int i = 0; i < count; i++) encoder.command(in, ignored);
}

void decode_thread_step(fuzz::ScriptInput& in, DecodedStep& step, bool live) {
  switch (step.op) {
    case Op::kThreadExit:
      step.may_wake = true;  // a caller waiting on this thread gets BR_DEAD_REPLY
      return;
    case Op::kWriteRead:
    case Op::kRead: {
      std::uint8_t read_mode = in.u8();
      step.may_park = fuzz::read_size(read_mode) > 0;
      if (step.op == Op::kWriteRead) {
        int count = in.u8() % 8;
        if (live) skip_commands(in, count);
        step.may_wake = count > 0;
      }
      return;
    }
    case Op::kIoctl: {
      fuzz::ScriptIoctl call = in.ioctl();
      step.ignored = call.cmd == BINDER_WRITE_READ;
      step.ioctl = call.cmd;
      step.ioctl_arg = call.at;
      step.may_wake = true;  // BINDER_FREEZE, for one, notifies other procs
      return;
    }
    default:
      return;
  }
}

}  // namespace

DecodedStep decode_step(fuzz::ScriptInput& in, const std::function<bool(int)>& live) {
  DecodedStep step;
  step.start = in.position();
  step.op = static_cast<Op>(in.u8() % static_cast<std::uint8_t>(Op::kCount));
  step.slot = in.u8() % fuzz::kSlots;  // kShrink's page count: the same one byte
  switch (step.op) {
    case Op::kOpen:
      step.space = fuzz::kSpaces[in.u8() % fuzz::kSpaces.size()];
      step.nonblock = in.u8() & 1;
      break;
    case Op::kFlush:
    case Op::kUnmap:
      step.may_wake = true;
      break;
    case Op::kClose:
    case Op::kShrink:
      break;
    default:
      step.thread = in.u8() % fuzz::kThreads;
      decode_thread_step(in, step, live(step.slot));
  }
  step.end = in.position();
  return step;
}

std::vector<std::pair<std::size_t, std::size_t>> step_spans(std::span<const std::uint8_t> script) {
  std::array<bool, fuzz::kSlots> open{};
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  fuzz::ScriptInput in(script);
  while (!in.done()) {
    DecodedStep step = decode_step(in, [&](int slot) { return open[slot]; });
    if (step.op == Op::kOpen) open[step.slot] = true;
    if (step.op == Op::kClose) open[step.slot] = false;
    spans.emplace_back(step.start, step.end);
  }
  return spans;
}

}  // namespace cused::diff

// SPDX-License-Identifier: GPL-2.0-only
// Where one step of a fuzz script (tests/fuzz/script.h) ends and what it asks for, read exactly
// as the in-process fuzzer reads it (tests/fuzz/script.cc): the coordinator sends each step's
// bytes to its slot, and the minimiser cuts scripts at step boundaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "tests/fuzz/script.h"
#include "tests/fuzz/script_input.h"

namespace cused::diff {

// A BINDER_FREEZE or BINDER_GET_FROZEN_INFO whose pid argument is kSlotPid + s names slot s's
// proc (S2.10, S2.11): the coordinator writes that proc's pid there before it sends the step,
// since pids are the OS's. No pid reaches it (PID_MAX_LIMIT is 2^22).
inline constexpr std::uint32_t kSlotPid = 0x40000000;

struct DecodedStep {
  fuzz::Op op = fuzz::Op::kCount;
  int slot = 0;
  int thread = -1;                 // -1: the proc's step, not a thread's
  std::size_t start = 0, end = 0;  // the step's bytes in the script
  std::size_t space = 0;           // kOpen: bytes to map
  bool nonblock = false;           // kOpen: variant bit 0 (S1.11)
  bool may_park = false;           // a read that may wait for work
  bool may_wake = false;           // may give another thread work (S3.4)
  bool ignored = false;            // the fuzzer issues nothing (a BINDER_WRITE_READ via kIoctl)
  unsigned ioctl = 0;              // kIoctl: the command
  std::size_t ioctl_arg = 0;       // kIoctl: where its argument bytes start in the script
};

// Reads the step at `in`; `live(slot)` says whether the slot's proc is open, since a
// write_read's commands are only read for a live slot.
DecodedStep decode_step(fuzz::ScriptInput& in, const std::function<bool(int)>& live);

// [start, end) of each step, supposing every open succeeds and every close closes.
std::vector<std::pair<std::size_t, std::size_t>> step_spans(std::span<const std::uint8_t> script);

}  // namespace cused::diff

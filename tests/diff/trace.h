// SPDX-License-Identifier: GPL-2.0-only
// One line of a differential trace: what a driver answered to one call, normalised so that the
// kernel's answer and cused's compare as text (docs/reliability.md, "Differential testing").
// Pointers into the caller's buffer space become offsets ("@0x40"), process ids stay raw here
// ("pid=1234") and the coordinator maps them to script roles; debug ids, which are global
// counters of the driver, are left out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "uapi/binder.h"

namespace cused::diff {

// The caller's buffer space: its mapping of the device, empty when unmapped. An address outside
// it shows as "no-space" once the caller had mapped it (a munmap, docs/binderfs.md's
// `munmap-unseen`) and as "unmapped" while it never had: a driver must deliver to neither.
struct BufferSpace {
  const std::byte* base = nullptr;
  std::size_t size = 0;
  bool was_mapped = false;
};

// "ret 0 wc 48/48 rc 88/512: BR_NOOP; BR_TRANSACTION ..." for a BINDER_WRITE_READ whose
// argument came back as `bwr` and whose read buffer is `read_buffer`.
std::string render_write_read(int ret, const binder_write_read& bwr,
                              std::span<const std::byte> read_buffer, BufferSpace space);

// " BC_TRANSACTION[obj,fd] BC_FREE_BUFFER": a command stream the caller wrote, in its memory.
std::string render_commands(std::span<const std::byte> commands);

// "ret -22" or "ret 0 out 0a00000000000000" for any other ioctl: the argument is shown when the
// ioctl writes one and the call succeeded (BINDER_GET_EXTENDED_ERROR without its debug id).
std::string render_ioctl(unsigned cmd, int ret, std::span<const std::byte> arg);

// "<errno name or value>" for a negative result, for readable traces.
std::string result_text(int ret);

}  // namespace cused::diff

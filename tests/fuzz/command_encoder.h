// SPDX-License-Identifier: GPL-2.0-only
// Turns a script's command bytes (Cmd, Obj, Damage in tests/fuzz/script.h) into a BC_ command
// stream placed in a client's memory: the in-process runner's arena, or a real process's own heap
// under tests/diff. Which buffer a BC_FREE_BUFFER frees, which BR_INCREFS an INCREFS_DONE answers
// and which death a DEAD_BINDER_DONE acknowledges come from the client's follow-ups, so the same
// bytes mean the same commands on any driver that answered the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "client/return_stream.h"
#include "tests/fuzz/script_input.h"

namespace cused::fuzz {

// Where a client keeps what its commands point at: a bump arena, never reused within a script,
// so a parked read's buffer stays valid. Of size 0 it places nothing (every address 0), which is
// enough to learn how many bytes commands take.
class ClientMemory {
 public:
  explicit ClientMemory(std::size_t size) : memory_(size) {}
  // `len` bytes holding `data`, 8-aligned; 0 when the memory is full (the script stops).
  std::uint64_t place(const void* data, std::size_t len);
  std::uint64_t reserve(std::size_t len) {
    std::vector<std::byte> zeros(len);
    return place(zeros.data(), len);
  }
  bool contains(std::uint64_t address, std::size_t len) const;

 private:
  std::vector<std::byte> memory_;
  std::size_t used_ = 0;
};

class CommandEncoder {
 public:
  // `mapping`: the client's buffer space (PTR objects may point into it), 0 when unmapped.
  CommandEncoder(ClientMemory& memory, client::FollowUps& owed, std::uint64_t mapping)
      : memory_(memory), owed_(owed), mapping_(mapping) {}

  // Reads one command from `in` and appends its BC_ bytes to `out`.
  void command(ScriptInput& in, std::vector<std::byte>& out);

 private:
  void transaction(ScriptInput& in, std::vector<std::byte>& out);
  void object(ScriptInput& in, std::vector<std::byte>& data, std::vector<binder_size_t>& offsets);
  std::uint64_t delivered_buffer(std::uint8_t index);

  ClientMemory& memory_;
  client::FollowUps& owed_;
  const std::uint64_t mapping_;
};

}  // namespace cused::fuzz

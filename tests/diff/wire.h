// SPDX-License-Identifier: GPL-2.0-only
// What tests/diff's coordinator and its slot processes say to each other over a SOCK_SEQPACKET
// pair: the coordinator sends one script step (its bytes, from the op byte on), a slot answers
// each finished call with one line of the trace (tests/diff/trace.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cused::diff {

struct StepMessage {
  std::uint32_t step = 0;
  std::vector<std::uint8_t> bytes;  // the step's script bytes, op byte first
};

struct ResultMessage {
  std::uint32_t step = 0;  // the step that issued the call
  std::uint8_t thread = 0;
  std::string line;
};

// One message each way; false (or nullopt) when the peer is gone.
bool send_step(int fd, const StepMessage& message);
std::optional<StepMessage> receive_step(int fd);
bool send_result(int fd, const ResultMessage& message);
std::optional<ResultMessage> receive_result(int fd);

}  // namespace cused::diff

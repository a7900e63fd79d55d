// SPDX-License-Identifier: GPL-2.0-only
// One line of a differential trace (tests/diff/trace.h, coordinator.cc) read back into its
// parts, so that a deviation rule (deviations.cc) and the coverage count can check what each
// driver answered — the thread, what was sent, the return value, the bytes consumed, the
// extended error — rather than match the text with a pattern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cused::diff {

// A command the caller wrote, as render_commands shows it: "BC_TRANSACTION" with its objects'
// kinds ("fd", "fda", "ptr", "obj"), or "?" for a parcel it did not read.
struct SentCommand {
  std::string name;
  std::vector<std::string> objects;
  bool unread_parcel = false;
  bool carries_fds() const;
};

struct TraceLine {
  enum class Kind {
    kAnswer,  // "12 s1.t0: write_read ... | ret 0 ...", "12 s1.t0: flush ret 0", ...
    kParked,  // "12 s1.t0: parked" (or "no answer")
    kState,   // "401 state s0:   buffer @0x0 size 16:0:0 active"
    kSlot,    // "401 s0: killed", "3 s0: open space ...", "5 s0: munmap ret 0"
    kOther,   // "(end of trace)" or anything unparsed
  } kind = Kind::kOther;
  std::string step;     // "12"
  std::string slot;     // "s1"
  std::string thread;   // "s1.t0"; "" for a slot's or a state line
  std::string call_of;  // "36" for "(call of step 36)": an earlier call's late answer
  std::string op;       // "write_read", "read", "flush", "munmap", "ioctl 0x400c620e", "killed"
  std::vector<SentCommand> sent;  // write_read's commands
  std::string ret;                // "0", "EINVAL"
  std::uint64_t write_consumed = 0, write_size = 0, read_consumed = 0, read_size = 0;
  std::vector<std::string> returns;  // "BR_NOOP", "BR_TRANSACTION target 0x0 ...", in order
  std::string ee_command, ee_param;  // the extended error after the call: "BR_OK", "0"
  std::string rest;                  // a state line's text after "state sN:", else the answer's
  std::string text;                  // the whole line

  bool has_return(std::string_view name) const;
  // The index of the first sent command that carries an fd or an fd array, if any.
  std::optional<std::size_t> first_fd_command() const;
  // Bytes the sent commands up to and including `index` take (command word and argument);
  // nullopt when one of them is not a known BC_ command.
  std::optional<std::uint64_t> bytes_through(std::size_t index) const;
  // How many of the sent commands the driver consumed (write_consumed covers them whole).
  std::size_t commands_consumed() const;
  bool is_write_read() const { return op == "write_read" || op == "read"; }
  bool failed_with(std::string_view command, std::string_view param) const {
    return ee_command == command && ee_param == param;
  }
};

TraceLine parse_trace_line(std::string_view line);

// The size of BC_ command `name`'s argument plus its command word; nullopt if unknown.
std::optional<std::uint64_t> command_bytes(std::string_view name);

}  // namespace cused::diff

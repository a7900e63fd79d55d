#include "tests/diff/deviations.h"

#include <algorithm>
#include <array>
#include <regex>

namespace cused::diff {

namespace {

struct Rule {
  Deviation deviation;
  const char* kernel;              // regex the kernel's line matches
  const char* cused;               // regex cused's line matches
  const char* ignoring = nullptr;  // if set: the lines are the same once its matches are blanked
  const char* earlier = nullptr;   // if set: a line before them matches it
};

constexpr Deviation kFdsOnFuse{
    "fds-on-fuse", "fuse",
    "S5.3, S5.4: a FUSE request cannot reach the caller's file table, so a transaction or reply "
    "with an FD object or an FDA with fds fails as for a target that does not accept fds (a "
    "reply's caller gets BR_FAILED_REPLY, extended error EPERM)"};

constexpr Deviation kUndeliveredBufferFreed{
    "undelivered-buffer-freed", "any",
    "S11.6, S12.7: the buffer of a transaction dropped before delivery (its receiving thread "
    "exited, or a reply it waited for failed) is freed with it, as the Rust driver does; the C "
    "driver keeps it, with the node ref it holds, until the proc is released"};

// Each rule is one row of docs/binderfs.md's deviation table.
const std::array<Rule, 6>& rules() {
  static const std::array<Rule, 6> table = {{
      {kFdsOnFuse,
       // What was sent is the same on both sides; the kernel's call may have parked.
       R"()", R"(write_read[^|]*\b(fd|fda)\b.*ee BR_FAILED_REPLY -1\b)"},
      // A reply with fds that FUSE refused fails on the caller's side (S4.7): its thread's
      // extended error says EPERM, where on the kernel the reply arrived.
      {kFdsOnFuse, R"()", R"(ee BR_FAILED_REPLY -1\b)", nullptr,
       R"(BC_REPLY(_SG)?\[[^\]]*\b(fd|fda)\b)"},
      {{"munmap-unseen", "fuse",
        "S1.6, S11.9: cused does not see a client unmap its buffer space, so it delivers where "
        "the kernel fails the call (BR_DEAD_REPLY, BR_FAILED_REPLY)"},
       R"(BR_(DEAD|FAILED)_REPLY)",
       R"((BR_REPLY|BR_TRANSACTION) [^;]*out-of-space)"},
      // The kernel's state lists the kept buffer where cused's goes on with the next line...
      {kUndeliveredBufferFreed,
       R"(^\d+ state s\d+:   buffer @0x[0-9a-f]+ size \d+:\d+:\d+ delivered$)",
       R"(^\d+ (state s\d+:|s\d+: killed))"},
      // ...and the node the kept buffer's call targeted holds one more local strong ref for it.
      {kUndeliveredBufferFreed, R"(^\d+ state s\d+:   node )", R"(^\d+ state s\d+:   node )",
       R"( ls \d+ )"},
      // The kernel's caller read before the release took back the ref on its node; the rest of
      // the line (what was sent, the dead reply) is the same.
      {{"release-race", "any",
        "S1.9: a caller that a dying proc's release fails with BR_DEAD_REPLY reads while the "
        "kernel's release goes on; when it reads before the dying proc's refs are dropped it is "
        "first told to take the ref on its node that the release then drops. cused releases the "
        "whole proc before its woken callers read"},
       R"(; BR_INCREFS ([0-9a-f]+); BR_ACQUIRE \1; BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY;)",
       R"(BR_NOOP; BR_TRANSACTION_COMPLETE; BR_DEAD_REPLY;)",
       R"( rc \d+/|BR_NOOP;( BR_INCREFS [0-9a-f]+; BR_ACQUIRE [0-9a-f]+;)?)"},
  }};
  return table;
}

}  // namespace

std::optional<Deviation> known_deviation(std::string_view path, const std::string& kernel,
                                         const std::string& cused,
                                         std::span<const std::string> before) {
  for (const Rule& rule : rules()) {
    if (rule.deviation.path != "any" && rule.deviation.path != path) continue;
    if (!std::regex_search(kernel, std::regex(rule.kernel)) ||
        !std::regex_search(cused, std::regex(rule.cused)))
      continue;
    if (rule.ignoring) {
      std::regex ignored(rule.ignoring);
      if (std::regex_replace(kernel, ignored, " _ ") != std::regex_replace(cused, ignored, " _ "))
        continue;
    }
    if (rule.earlier) {
      std::regex earlier(rule.earlier);
      if (std::none_of(before.begin(), before.end(),
                       [&](const std::string& line) { return std::regex_search(line, earlier); }))
        continue;
    }
    return rule.deviation;
  }
  return std::nullopt;
}

}  // namespace cused::diff

#include "tests/diff/deviations.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <regex>
#include <vector>

#include "tests/diff/trace_line.h"
#include "uapi/binder.h"

namespace cused::diff {

namespace {

constexpr Deviation kFdsOnFuse{
    "fds-on-fuse", "fuse",
    "S5.3, S5.4: a FUSE request cannot reach the caller's file table, so a transaction or reply "
    "with an FD object or an FDA with fds fails as for a target that does not accept fds (a "
    "reply's caller gets BR_FAILED_REPLY, extended error EPERM); refused where it stands, an fd "
    "that leads its command fails it with EPERM also where the kernel went on and failed it "
    "with EINVAL at a later object (gen-219) or, the command carrying fds only, with EFAULT at a "
    "later offset that descends or lies past the data (seed 1796309313), and where the kernel "
    "found one of its fds bad "
    "(EBADF: fd translation is the only source of it)"};

constexpr Deviation kMunmapUnseen{
    "munmap-unseen", "fuse",
    "S1.6, S11.9: cused does not see a client unmap its buffer space, so it delivers where the "
    "kernel fails the call (BR_DEAD_REPLY, extended error ESRCH: no space to allocate in)"};

constexpr Deviation kUndeliveredBufferFreed{
    "undelivered-buffer-freed", "any",
    "S11.6, S12.7: the buffer of a transaction dropped before delivery (its receiving thread "
    "exited, or a reply it waited for failed) is freed with it, as the Rust driver does; the C "
    "driver keeps it, with the node ref it holds, until the proc is released"};

constexpr Deviation kReleaseRace{
    "release-race", "any",
    "S1.9: a caller that a dying proc's release fails with BR_DEAD_REPLY reads while the "
    "kernel's release goes on; when it reads before the dying proc's refs are dropped it is "
    "first told to take the ref on its node that the release then drops. cused releases the "
    "whole proc before its woken callers read"};

// The two traces and where they differ, read back into their parts.
struct At {
  std::span<const std::string> kernel, cused;
  std::size_t k, c;
  TraceLine kl, cl;  // kernel[k] and cused[c] ("(end of trace)" past the end)

  // cused's lines before `c`: the part of the script both drivers answered comparably.
  std::span<const std::string> cused_before() const { return cused.first(c); }
};

using Rule = std::function<std::optional<DeviationMatch>(const At&)>;

bool is_transaction_or_reply(const SentCommand& command) {
  return command.name == "BC_TRANSACTION" || command.name == "BC_TRANSACTION_SG" ||
         command.name == "BC_REPLY" || command.name == "BC_REPLY_SG";
}

bool is_reply(const SentCommand& command) {
  return command.name == "BC_REPLY" || command.name == "BC_REPLY_SG";
}

// The same call on both sides: the step, the thread, the late answer's step, what was sent.
bool same_call(const TraceLine& a, const TraceLine& b) {
  auto sent_text = [](const TraceLine& l) { return l.text.substr(0, l.text.find(" | ")); };
  return a.step == b.step && a.thread == b.thread && a.call_of == b.call_of && a.op == b.op &&
         (a.op != "write_read" || sent_text(a) == sent_text(b));
}

// cused's call stopped right after the command that carries fds, which failed with EPERM: the
// FUSE path's refusal (S5.3), its bytes consumed and its extended error.
bool refused_fds_on_cused(const TraceLine& cl) {
  auto fd = cl.first_fd_command();
  if (cl.kind != TraceLine::Kind::kAnswer || cl.op != "write_read" || !fd ||
      !is_transaction_or_reply(cl.sent[*fd]) || cl.ret != "0")
    return false;
  auto through = cl.bytes_through(*fd);
  return through && cl.write_consumed == *through && cl.failed_with("BR_FAILED_REPLY", "-1") &&
         !cl.has_return("BR_TRANSACTION_COMPLETE");
}

// S5.3, S5.4: the kernel took the fd-carrying command, cused refused it. On the kernel the call
// parked (a transaction waiting for its reply), or went on: the command was consumed and sent
// (extended error BR_OK, no failed or dead reply; a sync call's BR_TRANSACTION_COMPLETE may
// come with a later read, as in freeze-3108's step 48), or it failed with EINVAL at an object after
// the fd, which the FUSE path never reaches (gen-219, docs/binderfs.md), or it failed with EBADF:
// only translating an fd gives that (binder_translate_fd's fget), so the kernel stopped at one of
// the command's fds, where cused refuses the first (the guest's live campaign, seed 1796282348),
// or, fds only, it failed with EFAULT at a later offset (kernel_faulted_later).
std::optional<DeviationMatch> fds_refused(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (!refused_fds_on_cused(cl)) return std::nullopt;
  if (kl.step != cl.step || kl.thread != cl.thread || kl.call_of != cl.call_of) return std::nullopt;
  const SentCommand& fd = cl.sent[*cl.first_fd_command()];
  bool kernel_parked = kl.kind == TraceLine::Kind::kParked && !is_reply(fd);
  bool kernel_sent = same_call(kl, cl) && kl.ret == "0" && kl.write_consumed >= cl.write_consumed &&
                     kl.failed_with("BR_OK", "0") && !kl.has_return("BR_FAILED_REPLY") &&
                     !kl.has_return("BR_DEAD_REPLY");
  // The kernel stopped after the same command, failing it with extended error `ee`, and
  // answered otherwise as cused did.
  auto kernel_failed_alike = [&](const char* ee) {
    return same_call(kl, cl) && kl.ret == "0" && kl.write_consumed == cl.write_consumed &&
           kl.failed_with("BR_FAILED_REPLY", ee) && kl.returns == cl.returns;
  };
  bool fd_first = !fd.objects.empty() && (fd.objects[0] == "fd" || fd.objects[0] == "fda");
  bool kernel_failed_later = fd_first && fd.objects.size() > 1 && kernel_failed_alike("-22");
  // EFAULT after fds only: no PTR to copy or FDA parent to read, and the data before the first
  // fd read the same on both, so the kernel faulted at a later offset that descended or lay past
  // the data (fuzz's kDescending, kPastEnd; the guest's live campaign, seed 1796309313).
  bool only_fds = !fd.objects.empty() && std::all_of(fd.objects.begin(), fd.objects.end(),
                                                     [](const auto& o) { return o == "fd"; });
  bool kernel_faulted_later = only_fds && kernel_failed_alike("-14");
  bool kernel_bad_fd = kernel_failed_alike("-9");
  if (!kernel_parked && !kernel_sent && !kernel_failed_later && !kernel_faulted_later &&
      !kernel_bad_fd)
    return std::nullopt;
  return DeviationMatch{kFdsOnFuse, 1, 1, false};
}

// S5.3, S4.7: a reply with fds that FUSE refused fails on its caller's side: the caller's line
// is the kernel's but for its extended error, EPERM where the kernel's reply went through. The
// reply with fds is the last reply another thread sent before, answered the same by both.
std::optional<DeviationMatch> fd_reply_refused_to_caller(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (kl.kind != TraceLine::Kind::kAnswer || !kl.is_write_read() || !same_call(kl, cl) ||
      !kl.failed_with("BR_OK", "0") || !cl.failed_with("BR_FAILED_REPLY", "-1"))
    return std::nullopt;
  auto without_ee = [](const std::string& text) { return text.substr(0, text.rfind(" | ")); };
  if (without_ee(kl.text) != without_ee(cl.text)) return std::nullopt;
  auto before = at.cused_before();
  for (auto line = before.rbegin(); line != before.rend(); ++line) {
    TraceLine earlier = parse_trace_line(*line);
    if (earlier.op != "write_read" || earlier.thread == cl.thread) continue;
    auto reply = std::find_if(earlier.sent.begin(), earlier.sent.end(), is_reply);
    if (reply == earlier.sent.end()) continue;
    if (!reply->carries_fds() || earlier.commands_consumed() == 0) return std::nullopt;
    return DeviationMatch{kFdsOnFuse, 1, 1, false};
  }
  return std::nullopt;
}

// The one return in which two lines differ, if the rest of the line is the same.
std::optional<std::size_t> only_differing_return(const TraceLine& a, const TraceLine& b) {
  if (a.returns.size() != b.returns.size()) return std::nullopt;
  std::optional<std::size_t> differing;
  for (std::size_t i = 0; i < a.returns.size(); i++) {
    if (a.returns[i] == b.returns[i]) continue;
    if (differing) return std::nullopt;
    differing = i;
  }
  return differing;
}

// True when `slot` unmapped its space (munmap ret 0) before, and did not open again since.
bool unmapped_before(std::span<const std::string> before, const std::string& slot) {
  for (auto line = before.rbegin(); line != before.rend(); ++line) {
    TraceLine earlier = parse_trace_line(*line);
    if (earlier.slot != slot) continue;
    if (earlier.op == "open space") return false;
    if (earlier.op == "munmap") return earlier.ret == "0";
  }
  return false;
}

// S1.6, S11.9: after the caller's munmap, cused delivers a transaction or reply into space the
// caller no longer maps ("no-space"), where the kernel fails the call with BR_DEAD_REPLY.
// Everything else the same: what was sent, the return value, the bytes consumed on both sides.
std::optional<DeviationMatch> munmap_unseen(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (cl.kind != TraceLine::Kind::kAnswer || !cl.is_write_read() || !same_call(kl, cl) ||
      kl.ret != cl.ret || kl.write_consumed != cl.write_consumed ||
      kl.write_size != cl.write_size || kl.read_size != cl.read_size)
    return std::nullopt;
  auto differing = only_differing_return(kl, cl);
  if (!differing) return std::nullopt;
  static const std::regex delivered_unmapped(
      R"(^BR_(TRANSACTION|REPLY) .* data \d+ no-space offsets \d+ no-space.*)");
  const std::string &kernel_return = kl.returns[*differing], &cused_return = cl.returns[*differing];
  if (!std::regex_match(cused_return, delivered_unmapped) || kernel_return != "BR_DEAD_REPLY")
    return std::nullopt;
  // The kernel's failure is shorter than the transaction data cused returned in its place.
  if (kl.read_consumed + sizeof(binder_transaction_data) != cl.read_consumed) return std::nullopt;
  // The kernel found no buffer space to allocate in (ESRCH, its BR_DEAD_REPLY); cused's call
  // did not fail.
  if (!kl.failed_with("BR_DEAD_REPLY", "-3") || !cl.failed_with("BR_OK", "0")) return std::nullopt;
  if (!unmapped_before(at.cused_before(), cl.slot)) return std::nullopt;
  return DeviationMatch{kMunmapUnseen, 1, 1, false};
}

// "@0x10 size 40:8:0" of a kernel's state line listing a buffer with no transaction.
std::optional<std::string> delivered_buffer(const TraceLine& line) {
  static const std::regex buffer(R"(^   buffer (@0x[0-9a-f]+) size (\d+):(\d+):\d+ delivered$)");
  std::smatch m;
  if (line.kind != TraceLine::Kind::kState || !std::regex_match(line.rest, m, buffer))
    return std::nullopt;
  return fmt::format("data {} {} offsets {} ", m[2].str(), m[1].str(), m[3].str());
}

// The buffer the kernel lists as "delivered" in `slot`'s state is not one userspace holds, and
// a transaction was dropped after userspace last could have: no thread of `slot` read a
// transaction or reply with its data at its offset, or one did and the slot freed a buffer
// (BC_FREE_BUFFER consumed) since; and after the last of those, a thread of the slot exited or a
// call failed with BR_DEAD_REPLY or BR_FAILED_REPLY (S11.6, S12.7). `delivery` is
// delivered_buffer's "data 40 @0x10 offsets 8 ".
bool dropped_undelivered(std::span<const std::string> before, const std::string& slot,
                         const std::string& delivery) {
  bool held = false, dropped = false;
  for (const std::string& text : before) {
    TraceLine earlier = parse_trace_line(text);
    if (earlier.kind != TraceLine::Kind::kAnswer) continue;
    bool own = earlier.slot == slot;
    if (own && text.find(delivery) != std::string::npos) held = true, dropped = false;
    std::size_t consumed = earlier.commands_consumed();
    for (std::size_t i = 0; own && i < consumed; i++)
      if (earlier.sent[i].name == "BC_FREE_BUFFER") held = false, dropped = false;
    dropped |= (own && earlier.op == "thread_exit" && earlier.ret == "0") ||
               earlier.has_return("BR_DEAD_REPLY") || earlier.has_return("BR_FAILED_REPLY");
  }
  return !held && dropped;
}

// S11.6, S12.7: the kernel's state lists the kept buffer, where cused's goes on with the
// kernel's next line.
std::optional<DeviationMatch> undelivered_buffer(const At& at) {
  auto delivery = delivered_buffer(at.kl);
  if (!delivery) return std::nullopt;
  bool cused_goes_on = at.k + 1 < at.kernel.size()
                           ? at.c < at.cused.size() && at.kernel[at.k + 1] == at.cused[at.c]
                           : at.c == at.cused.size();
  if (!cused_goes_on || !dropped_undelivered(at.cused_before(), at.kl.slot, *delivery))
    return std::nullopt;
  return DeviationMatch{kUndeliveredBufferFreed, 1, 0, true};
}

// The node's local strong count in a state line, and the line with it blanked.
std::optional<std::pair<int, std::string>> node_local_strong(const TraceLine& line) {
  static const std::regex ls(R"(^(   node .* )ls (\d+)( .*)$)");
  std::smatch m;
  if (line.kind != TraceLine::Kind::kState || !std::regex_match(line.rest, m, ls))
    return std::nullopt;
  return std::pair(std::stoi(m[2].str()), line.slot + m[1].str() + m[3].str());
}

// S11.6, S12.7: the node a kept buffer's call targeted holds one more local strong ref for
// each such buffer: the kernel's count is cused's plus as many kept undelivered buffers as
// the kernel lists in the node's proc (whose state follows) and cused does not.
std::optional<DeviationMatch> undelivered_buffer_node(const At& at) {
  auto kernel_node = node_local_strong(at.kl), cused_node = node_local_strong(at.cl);
  if (!kernel_node || !cused_node || kernel_node->second != cused_node->second ||
      at.kl.step != at.cl.step || kernel_node->first <= cused_node->first)
    return std::nullopt;
  int kept = 0;
  for (std::size_t i = at.k + 1; i < at.kernel.size(); i++) {
    TraceLine later = parse_trace_line(at.kernel[i]);
    if (later.kind != TraceLine::Kind::kState || later.slot != at.kl.slot) break;
    auto delivery = delivered_buffer(later);
    if (!delivery || std::find(at.cused.begin(), at.cused.end(), at.kernel[i]) != at.cused.end())
      continue;
    kept += dropped_undelivered(at.cused_before(), later.slot, *delivery);
  }
  if (kernel_node->first - cused_node->first != kept) return std::nullopt;
  return DeviationMatch{kUndeliveredBufferFreed, 1, 1, true};
}

// S1.9: the kernel's caller read BR_INCREFS and BR_ACQUIRE for one node before its
// BR_TRANSACTION_COMPLETE and BR_DEAD_REPLY, which cused's caller reads without them: the rest
// of the line (what was sent, the return value, write bytes, extended error) the same, and
// read bytes fewer by exactly those two. A proc was killed at this step.
std::optional<DeviationMatch> release_race(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (kl.kind != TraceLine::Kind::kAnswer || !kl.is_write_read() || !same_call(kl, cl) ||
      kl.ret != cl.ret || kl.write_consumed != cl.write_consumed || kl.read_size != cl.read_size ||
      kl.ee_command != cl.ee_command || kl.ee_param != cl.ee_param)
    return std::nullopt;
  auto increfs = std::find_if(kl.returns.begin(), kl.returns.end(),
                              [](const std::string& r) { return r.starts_with("BR_INCREFS "); });
  if (increfs == kl.returns.end() || increfs + 3 >= kl.returns.end()) return std::nullopt;
  std::string node = increfs->substr(std::string_view("BR_INCREFS ").size());
  if (increfs[1] != "BR_ACQUIRE " + node || increfs[2] != "BR_TRANSACTION_COMPLETE" ||
      increfs[3] != "BR_DEAD_REPLY")
    return std::nullopt;
  std::vector<std::string> without(kl.returns.begin(), increfs);
  without.insert(without.end(), increfs + 2, kl.returns.end());
  constexpr std::uint64_t kNodeWork = 2 * (sizeof(std::uint32_t) + sizeof(binder_ptr_cookie));
  if (without != cl.returns || kl.read_consumed != cl.read_consumed + kNodeWork)
    return std::nullopt;
  bool killed_now = std::any_of(at.cused.begin(), at.cused.end(), [&](const std::string& text) {
    TraceLine line = parse_trace_line(text);
    return line.kind == TraceLine::Kind::kSlot && line.op == "killed" && line.step == cl.step;
  });
  if (!killed_now) return std::nullopt;
  return DeviationMatch{kReleaseRace, 1, 1, true};
}

struct PathRule {
  Deviation deviation;
  Rule rule;
};

}  // namespace

std::optional<DeviationMatch> known_deviation(std::string_view path,
                                              std::span<const std::string> kernel, std::size_t k,
                                              std::span<const std::string> cused, std::size_t c) {
  static const std::vector<PathRule> rules = {
      {kFdsOnFuse, fds_refused},
      {kFdsOnFuse, fd_reply_refused_to_caller},
      {kMunmapUnseen, munmap_unseen},
      {kUndeliveredBufferFreed, undelivered_buffer},
      {kUndeliveredBufferFreed, undelivered_buffer_node},
      {kReleaseRace, release_race},
  };
  static const std::string kEnd = "(end of trace)";
  At at{kernel,
        cused,
        k,
        c,
        parse_trace_line(k < kernel.size() ? kernel[k] : kEnd),
        parse_trace_line(c < cused.size() ? cused[c] : kEnd)};
  for (const PathRule& rule : rules) {
    if (rule.deviation.path != "any" && rule.deviation.path != path) continue;
    if (auto match = rule.rule(at)) return match;
  }
  return std::nullopt;
}

}  // namespace cused::diff

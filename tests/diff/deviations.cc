// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/deviations.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <vector>

#include "uapi/binder.h"

namespace cused::diff {

namespace {

constexpr Deviation kFdsOnFuse{
    "fds-on-fuse", "fuse",
    "S5.3, S5.4: a FUSE request cannot reach the caller's file table, so a transaction with an "
    "FD object or an FDA with fds fails as for a target that does not accept fds (BR_FAILED_REPLY, "
    "extended error EPERM, the kernel's bytes for that refusal), and a reply with fds fails on "
    "its caller's side (BR_FAILED_REPLY, EPERM); refused where it stands, an fd that leads its "
    "command fails it with EPERM also where the kernel went on and failed it with EINVAL at a "
    "later object (gen-219) or, the command carrying fds only, with EFAULT at a later offset "
    "that descends or lies past the data (seed 1796309313), and where the kernel found one of "
    "its fds bad (EBADF: fd translation is the only source of it)"};

constexpr Deviation kMunmapUnseen{
    "munmap-unseen", "fuse",
    "S1.6, S11.9: cused does not see a client unmap its buffer space, so it delivers the reply "
    "where the kernel fails the call (BR_DEAD_REPLY, extended error ESRCH: no space to allocate "
    "in)"};

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

// The two traces and where they differ.
struct At {
  Lines kernel, cused;
  std::size_t k, c;
  const TraceLine &kl, &cl;  // kernel[k] and cused[c] ("(end of trace)" past the end)

  // cused's lines before `c`: the part of the script both drivers answered comparably.
  Lines cused_before() const { return cused.first(c); }
  Lines kernel_after() const { return k + 1 < kernel.size() ? kernel.subspan(k + 1) : Lines{}; }
};

using Rule = std::optional<DeviationMatch> (*)(const At&);

bool is_transaction(const SentCommand& command) {
  return command.name == "BC_TRANSACTION" || command.name == "BC_TRANSACTION_SG";
}

bool is_reply(const SentCommand& command) {
  return command.name == "BC_REPLY" || command.name == "BC_REPLY_SG";
}

bool is_answer(const TraceLine& l) { return l.kind == TraceLine::Kind::kAnswer; }

// The same call on both sides: the step, the thread, the late answer's step, what was sent, the
// sizes of the write and the read.
bool same_call(const TraceLine& a, const TraceLine& b) {
  auto sent_text = [](const TraceLine& l) {
    return std::string_view(l.text).substr(0, l.text.find(" | "));
  };
  return a.step == b.step && a.thread == b.thread && a.call_of == b.call_of && a.op == b.op &&
         a.write_size == b.write_size && a.read_size == b.read_size &&
         (a.op != "write_read" || sent_text(a) == sent_text(b));
}

// A read stops when less than a BR_ code and the largest transaction payload is left (S3.2):
// the kernel's binder_thread_read and cused's read.cc alike.
constexpr std::uint64_t kReadItemRoom =
    sizeof(std::uint32_t) + sizeof(binder_transaction_data_secctx);
constexpr std::uint64_t kWord = sizeof(std::uint32_t);

// What the kernel's driver returns to a transaction it fails at once (binder_transaction's
// error path queues the failure as the thread's return_error; binder_thread_read puts BR_NOOP
// first, then the failure when a whole item fits): for a read of `read_size` bytes, nothing was
// pending before.
std::vector<std::string> failure_returns(std::uint64_t read_size) {
  if (read_size == 0) return {};
  if (read_size < kWord + kReadItemRoom) return {"BR_NOOP"};
  return {"BR_NOOP", "BR_FAILED_REPLY"};
}

std::uint64_t bytes_of(const std::vector<std::string>& returns) {
  return kWord * returns.size();  // only codes without payload (BR_NOOP, BR_FAILED_REPLY, ...)
}

// The kernel's answer to a transaction whose target does not accept fds (binder_translate_fd:
// EPERM), which is cused's FUSE answer to every fd: the call stopped after the command, ret 0,
// extended error BR_FAILED_REPLY -1, and exactly the failure's bytes for its read size.
bool is_fd_refusal(const TraceLine& l, std::size_t fd) {
  auto through = l.bytes_through(fd);
  auto returns = failure_returns(l.read_size);
  return through && l.write_consumed == *through && l.ret == "0" && l.returns == returns &&
         l.read_consumed == bytes_of(returns) && l.failed_with("BR_FAILED_REPLY", "-1");
}

// The kernel took the command: ret 0, extended error BR_OK, every command up to the fd's
// consumed, and what it read only the transactions' completions (a sync call's may come with a
// later read, as in freeze-3108's step 48).
bool kernel_sent(const TraceLine& kl, std::size_t fd) {
  auto through = kl.bytes_through(fd);
  if (!through || kl.write_consumed < *through || kl.ret != "0" || !kl.failed_with("BR_OK", "0"))
    return false;
  if (kl.read_size == 0) return kl.returns.empty() && kl.read_consumed == 0;
  if (kl.returns.empty() || kl.returns.front() != "BR_NOOP") return false;
  bool completions = std::all_of(kl.returns.begin() + 1, kl.returns.end(),
                                 [](const auto& r) { return r == "BR_TRANSACTION_COMPLETE"; });
  return completions && kl.read_consumed == bytes_of(kl.returns);
}

// The slots a transaction `from` sent reached in the kernel's run, from its lines `after`: the
// threads that read a BR_TRANSACTION from its slot (or a one-way one, which names no sender,
// carrying an fd, which cused's FUSE path never delivers), the procs whose state shows a
// transaction of its thread.
std::vector<std::string> reached_by(Lines after, const TraceLine& from) {
  std::vector<std::string> slots = {from.slot};
  auto add = [&](const std::string& slot) {
    if (!slot.empty() && std::find(slots.begin(), slots.end(), slot) == slots.end())
      slots.push_back(slot);
  };
  const std::string sender = "pid=" + from.slot + " ";
  const std::string state_from = "from " + from.slot + ":" + from.thread + " ";
  static const std::regex to(R"( to (s\d+):)");
  for (const TraceLine* line : after) {
    if (is_answer(*line)) {
      for (const auto& r : line->returns)
        if (r.starts_with("BR_TRANSACTION ") &&
            (r.find(sender) != std::string::npos ||
             (r.find(" pid=0 ") != std::string::npos && r.find(" fd") != std::string::npos)))
          add(line->slot);
    } else if (line->kind == TraceLine::Kind::kState &&
               line->rest.find(state_from) != std::string::npos) {
      add(line->slot);
      std::smatch m;
      if (std::regex_search(line->rest, m, to)) add(m[1].str());
    }
  }
  return slots;
}

// S5.3, S5.4: cused refused the transaction's fd with exactly the kernel's bytes for an fd
// refusal (is_fd_refusal), where the kernel:
// - took the command (kernel_sent) or parked in it (a sync call waiting for its reply): the
//   transaction never reached its target on cused, so the caller's and the target's slots go
//   on differently (affected);
// - failed it the same way with an fd-specific extended error: EBADF (-9; only translating an
//   fd gives it, binder_translate_fd's fget), EINVAL (-22) for a command whose first object is
//   the fd and that has objects after it (gen-219: the kernel translated the fd and failed at a
//   later object), EFAULT (-14) for a command of fds only (a later offset that descends or lies
//   past the data, seed 1796309313). Both stopped there: the rest is compared.
std::optional<DeviationMatch> fds_refused(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  // A refusal is immediate: cused's line is the call's own answer, never a late one.
  auto fd = cl.first_fd_command();
  if (!is_answer(cl) || cl.op != "write_read" || !cl.call_of.empty() || !fd ||
      !is_transaction(cl.sent[*fd]) || !is_fd_refusal(cl, *fd))
    return std::nullopt;
  if (kl.step != cl.step || kl.thread != cl.thread || kl.call_of != cl.call_of) return std::nullopt;
  if ((kl.kind == TraceLine::Kind::kParked && kl.op == "parked") ||
      (same_call(kl, cl) && kernel_sent(kl, *fd)))
    return DeviationMatch{kFdsOnFuse, "fds_refused (sent)", 1, 1,
                          reached_by(at.kernel_after(), cl)};
  if (!same_call(kl, cl) || kl.write_consumed != cl.write_consumed || kl.ret != "0" ||
      kl.returns != cl.returns || kl.read_consumed != cl.read_consumed ||
      kl.ee_command != "BR_FAILED_REPLY")
    return std::nullopt;
  const auto& objects = cl.sent[*fd].objects;
  bool fd_first = objects.front() == "fd" || objects.front() == "fda";
  bool only_fds = std::all_of(objects.begin(), objects.end(), [](auto& o) { return o == "fd"; });
  if (kl.ee_param == "-9") return DeviationMatch{kFdsOnFuse, "fds_refused (EBADF)", 1, 1, {}};
  if (kl.ee_param == "-22" && fd_first && objects.size() > 1)
    return DeviationMatch{kFdsOnFuse, "fds_refused (EINVAL after the fd)", 1, 1, {}};
  if (kl.ee_param == "-14" && only_fds)
    return DeviationMatch{kFdsOnFuse, "fds_refused (EFAULT after fds only)", 1, 1, {}};
  return std::nullopt;
}

// Where `caller`'s sync transaction, still waiting for its reply, was sent: for a late answer
// ("(call of step N)") that itself consumed the transaction, the line where step N parked; else
// the thread's last earlier line that consumed a BC_TRANSACTION/_SG without failing, after which
// it read no BR_REPLY, BR_FAILED_REPLY or BR_DEAD_REPLY. An index into `before`.
std::optional<std::size_t> transaction_sent(Lines before, const TraceLine& caller) {
  auto consumed_transaction = [](const TraceLine& l) {
    std::size_t consumed = l.commands_consumed();
    for (std::size_t i = 0; i < consumed; i++)
      if (is_transaction(l.sent[i])) return true;
    return false;
  };
  for (std::size_t i = before.size(); i-- > 0;) {
    const TraceLine& l = *before[i];
    if (l.thread != caller.thread) continue;
    if (!caller.call_of.empty()) {
      if (l.kind == TraceLine::Kind::kParked && l.op == "parked" && l.step == caller.call_of &&
          consumed_transaction(caller))
        return i;
      continue;
    }
    if (!is_answer(l)) continue;
    if (l.has_return("BR_REPLY") || l.has_return("BR_FAILED_REPLY") ||
        l.has_return("BR_DEAD_REPLY"))
      return std::nullopt;
    if (consumed_transaction(l))
      return l.ret == "0" && l.failed_with("BR_OK", "0") ? std::optional(i) : std::nullopt;
  }
  return std::nullopt;
}

// The reply another slot sent `caller` after its transaction (sent at `before[sent]`): the last
// line since, of another slot, that consumed a BC_REPLY/_SG without failing (ret 0, extended
// error BR_OK), whose slot had read a BR_TRANSACTION from the caller's slot in between.
const TraceLine* reply_to(Lines before, const TraceLine& caller, std::size_t sent) {
  const std::string sender = "pid=" + caller.slot + " ";
  std::vector<std::string> delivered_to;  // slots that read a transaction of the caller's slot
  const TraceLine* reply = nullptr;
  for (std::size_t i = sent + 1; i < before.size(); i++) {
    const TraceLine& l = *before[i];
    if (!is_answer(l) || l.slot == caller.slot) continue;
    for (const auto& r : l.returns)
      if (r.starts_with("BR_TRANSACTION ") && r.find(sender) != std::string::npos)
        delivered_to.push_back(l.slot);
    auto r = std::find_if(l.sent.begin(), l.sent.end(), is_reply);
    if (r == l.sent.end() || static_cast<std::size_t>(r - l.sent.begin()) >= l.commands_consumed())
      continue;
    bool delivered =
        std::find(delivered_to.begin(), delivered_to.end(), l.slot) != delivered_to.end();
    if (delivered && l.ret == "0" && l.failed_with("BR_OK", "0")) reply = &l;
  }
  return reply;
}

const SentCommand& reply_command(const TraceLine& l) {
  return *std::find_if(l.sent.begin(), l.sent.end(), is_reply);
}

// The kernel's returns with the one at `index` replaced.
std::vector<std::string> replaced(std::vector<std::string> returns, std::size_t index,
                                  std::string by) {
  returns[index] = std::move(by);
  return returns;
}

// S5.3, S4.7: a reply with fds that FUSE refused fails on its caller's side (the kernel's error
// path: the replier reads BR_TRANSACTION_COMPLETE, the caller BR_FAILED_REPLY with extended
// error EPERM). The caller's line is the kernel's, the same call, but for: extended error
// BR_FAILED_REPLY -1 where the kernel's was BR_OK 0, and, where the kernel's caller read the
// reply, BR_FAILED_REPLY in the BR_REPLY's place (the payload's bytes fewer). The caller is a
// thread waiting for the reply to its sync transaction, and the reply that fd-carrying BC_REPLY
// another slot sent after reading that transaction, answered the same on both. The caller's
// slot goes on without the reply's buffer, the replier's without what the kernel's reply did to
// its nodes.
std::optional<DeviationMatch> fd_reply_refused_to_caller(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (!is_answer(kl) || !kl.is_write_read() || !same_call(kl, cl) || kl.ret != "0" ||
      cl.ret != "0" || kl.write_consumed != cl.write_consumed || !kl.failed_with("BR_OK", "0") ||
      !cl.failed_with("BR_FAILED_REPLY", "-1"))
    return std::nullopt;
  auto reply_at = std::find_if(kl.returns.begin(), kl.returns.end(),
                               [](const auto& r) { return r.starts_with("BR_REPLY "); });
  if (reply_at == kl.returns.end()) {
    if (kl.returns != cl.returns || kl.read_consumed != cl.read_consumed) return std::nullopt;
  } else {
    auto index = static_cast<std::size_t>(reply_at - kl.returns.begin());
    if (cl.returns != replaced(kl.returns, index, "BR_FAILED_REPLY") ||
        kl.read_consumed != cl.read_consumed + sizeof(binder_transaction_data))
      return std::nullopt;
  }
  // The caller's transaction, sent by an earlier line of the thread.
  Lines before = at.cused_before();
  auto sent = transaction_sent(before, cl);
  if (!sent) return std::nullopt;
  const TraceLine* reply = reply_to(before, cl, *sent);
  if (!reply || !reply_command(*reply).carries_fds()) return std::nullopt;
  return DeviationMatch{kFdsOnFuse, "fd_reply_refused_to_caller", 1, 1, {cl.slot, reply->slot}};
}

// True when `slot` unmapped its space (munmap ret 0) before, and did not open again since.
bool unmapped_before(Lines before, const std::string& slot) {
  for (auto line = before.rbegin(); line != before.rend(); ++line) {
    const TraceLine& earlier = **line;
    if (earlier.slot != slot) continue;
    if (earlier.op == "open space") return false;
    if (earlier.op == "munmap") return earlier.ret == "0";
  }
  return false;
}

// S1.6, S11.9: after the caller's munmap, cused delivers the reply into space the caller no
// longer maps ("no-space"), where the kernel fails the call with BR_DEAD_REPLY, extended error
// ESRCH (-3). The same call; its return value, bytes written and read sizes the same; the one
// differing return the kernel's BR_DEAD_REPLY and cused's BR_REPLY as a reply reads (target and
// cookie 0, pid=0: a reply has no sender thread, euid 0: the slots' own) with as many offsets
// as the fd-less BC_REPLY another slot sent it after reading its transaction (answered the
// same on both) had objects; the read longer by the payload; cused's extended error BR_OK.
// The caller waits for that reply, and its slot goes on holding the delivered buffer.
std::optional<DeviationMatch> munmap_unseen(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (!is_answer(cl) || !cl.is_write_read() || !same_call(kl, cl) || kl.ret != cl.ret ||
      kl.write_consumed != cl.write_consumed || kl.returns.size() != cl.returns.size())
    return std::nullopt;
  std::optional<std::size_t> differing;
  for (std::size_t i = 0; i < kl.returns.size(); i++) {
    if (kl.returns[i] == cl.returns[i]) continue;
    if (differing) return std::nullopt;
    differing = i;
  }
  if (!differing || kl.returns[*differing] != "BR_DEAD_REPLY") return std::nullopt;
  if (kl.read_consumed + sizeof(binder_transaction_data) != cl.read_consumed) return std::nullopt;
  if (!kl.failed_with("BR_DEAD_REPLY", "-3") || !cl.failed_with("BR_OK", "0")) return std::nullopt;
  Lines before = at.cused_before();
  if (!unmapped_before(before, cl.slot)) return std::nullopt;
  auto sent = transaction_sent(before, cl);
  if (!sent) return std::nullopt;
  const TraceLine* reply = reply_to(before, cl, *sent);
  if (!reply || reply_command(*reply).carries_fds()) return std::nullopt;
  static const std::regex delivered_unmapped(
      R"(^BR_REPLY target 0x0 cookie 0x0 code 0x[0-9a-f]+ flags 0x[0-9a-f]+ pid=0 euid 0 data \d+ no-space offsets (\d+) no-space unreadable$)");
  std::smatch m;
  if (!std::regex_match(cl.returns[*differing], m, delivered_unmapped) ||
      std::stoull(m[1].str()) != sizeof(binder_size_t) * reply_command(*reply).objects.size())
    return std::nullopt;
  return DeviationMatch{kMunmapUnseen, "munmap_unseen", 1, 1, {cl.slot}};
}

// A kernel's state line listing a buffer with no transaction: "buffer @0x10 size 40:8:0
// delivered".
struct KeptBuffer {
  std::string delivery;  // how a read shows it: "data 40 @0x10 offsets 8 "
  std::uint64_t offsets = 0;
};

std::optional<KeptBuffer> delivered_buffer(const TraceLine& line) {
  static const std::regex buffer(R"(^   buffer (@0x[0-9a-f]+) size (\d+):(\d+):\d+ delivered$)");
  std::smatch m;
  if (line.kind != TraceLine::Kind::kState || !std::regex_match(line.rest, m, buffer))
    return std::nullopt;
  return KeptBuffer{fmt::format("data {} {} offsets {} ", m[2].str(), m[1].str(), m[3].str()),
                    std::stoull(m[3].str())};
}

bool read_failed_reply(const TraceLine& l) {
  return l.has_return("BR_DEAD_REPLY") || l.has_return("BR_FAILED_REPLY");
}

// The buffer the kernel lists as "delivered" in `slot`'s state is the one of a transaction or
// reply dropped before delivery after userspace last could have held it (S11.6, S12.7):
// - held: a thread of `slot` read a transaction or reply with its data at its offset; a
//   consumed BC_FREE_BUFFER of the slot frees it only when it is the one buffer the slot holds
//   (the trace does not show which pointer a free names);
// - a transaction dropped: a thread of another slot sent one with as many objects as the
//   buffer has offsets (ret 0, extended error BR_OK) and read no reply to it, and a thread of
//   `slot` then exited (thread_exit ret 0) or read a failed reply of its own;
// - a reply dropped: a thread of `slot` sent a transaction, a thread of another slot that read
//   it (BR_TRANSACTION pid=slot) sent a BC_REPLY with as many objects as the buffer has offsets
//   (ret 0, BR_OK), and the thread exited before it read a reply.
// Either after the buffer was last held.
bool dropped_undelivered(Lines before, const std::string& slot, const KeptBuffer& kept) {
  bool held = false, dropped = false;
  std::size_t holding = 0;  // buffers delivered to the slot and not freed
  auto objects_fit = [&](const SentCommand& command) {
    return command.objects.size() * sizeof(binder_size_t) == kept.offsets;
  };
  std::map<std::string, bool> sent_to_slot;  // another slot's thread: no reply yet, its
                                             // transaction fits
  std::map<std::string, bool> awaiting;      // slot's threads waiting: a fitting reply is queued
  std::vector<std::string> read_from_slot;   // other slots that read a transaction of `slot`
  const std::string sender = "pid=" + slot + " ";
  // A consumed command of `l` went through when the call did, or when a later one was consumed
  // after it (the driver stops reading at a command that fails).
  auto went_through = [](const TraceLine& l, std::size_t i) {
    const std::size_t consumed = l.commands_consumed();
    return l.ret == "0" && i < consumed && (l.failed_with("BR_OK", "0") || i + 1 < consumed);
  };
  // A parked call's write half ran at its own step, before the lines printed between it and its
  // late answer: another slot's fitting transaction in a call made before `step` and answered
  // after `from`, without a reply, was queued before that step (seed 20261432 of the 60-minute
  // campaign: sent at step 15, parked, the target's thread exited at 18, answered at 18).
  auto sent_by_parked_call = [&](std::size_t from, const std::string& step) {
    for (std::size_t j = from + 1; j < before.size(); j++) {
      const TraceLine& late = *before[j];
      if (late.call_of.empty() || late.slot == slot || !is_answer(late) ||
          std::stoul(late.call_of) >= std::stoul(step) || late.has_return("BR_REPLY"))
        continue;
      for (std::size_t i = 0; i < late.sent.size(); i++)
        if (is_transaction(late.sent[i]) && went_through(late, i) && objects_fit(late.sent[i]))
          return true;
    }
    return false;
  };
  for (std::size_t index = 0; index < before.size(); index++) {
    const TraceLine& l = *before[index];
    if (!is_answer(l)) continue;
    std::size_t consumed = l.commands_consumed();
    if (l.slot == slot) {
      // The write half first: a free in the same call comes before what its read delivers.
      for (std::size_t i = 0; i < consumed; i++) {
        if (l.sent[i].name == "BC_FREE_BUFFER") {
          if (held && holding == 1) held = false;
          holding -= holding > 0;
        }
        if (is_transaction(l.sent[i]) && went_through(l, i)) awaiting[l.thread] = false;
      }
      for (const auto& r : l.returns) {
        bool delivery = (r.starts_with("BR_TRANSACTION ") || r.starts_with("BR_REPLY ")) &&
                        r.find(" @0x") != std::string::npos;
        holding += delivery;
        if (delivery && r.find(kept.delivery) != std::string::npos) held = true, dropped = false;
      }
      if (l.has_return("BR_REPLY") || read_failed_reply(l)) awaiting.erase(l.thread);
      bool exited = l.op == "thread_exit" && l.ret == "0";
      if (exited || read_failed_reply(l)) {
        for (const auto& [thread, fits] : sent_to_slot) dropped |= fits && !held;
        sent_to_slot.clear();
        if (!held && sent_by_parked_call(index, l.step)) dropped = true;
      }
      if (exited) {
        auto waiting = awaiting.find(l.thread);
        if (waiting != awaiting.end() && waiting->second && !held) dropped = true;
        awaiting.erase(l.thread);
      }
      continue;
    }
    for (const auto& r : l.returns)
      if (r.starts_with("BR_TRANSACTION ") && r.find(sender) != std::string::npos)
        read_from_slot.push_back(l.slot);
    if (l.has_return("BR_REPLY")) sent_to_slot.erase(l.thread);
    bool read_ours =
        std::find(read_from_slot.begin(), read_from_slot.end(), l.slot) != read_from_slot.end();
    for (std::size_t i = 0; i < consumed; i++) {
      if (!went_through(l, i)) continue;
      if (is_transaction(l.sent[i])) sent_to_slot[l.thread] = objects_fit(l.sent[i]);
      if (is_reply(l.sent[i]) && read_ours && objects_fit(l.sent[i]))
        for (auto& [thread, fits] : awaiting) fits = true;
    }
  }
  return !held && dropped;
}

// S11.6, S12.7: the kernel's state lists the kept buffer, where cused's goes on with the
// kernel's next line.
std::optional<DeviationMatch> undelivered_buffer(const At& at) {
  auto kept = delivered_buffer(at.kl);
  if (!kept) return std::nullopt;
  bool cused_goes_on = at.k + 1 < at.kernel.size()
                           ? at.c < at.cused.size() && at.kernel[at.k + 1]->text == at.cl.text
                           : at.c == at.cused.size();
  if (!cused_goes_on || !dropped_undelivered(at.cused_before(), at.kl.slot, *kept))
    return std::nullopt;
  return DeviationMatch{kUndeliveredBufferFreed, "undelivered_buffer", 1, 0, {}};
}

// The node's local strong count in a state line, and the line with it blanked.
std::optional<std::pair<int, std::string>> node_local_strong(const TraceLine& line) {
  static const std::regex ls(R"(^(   node .* )ls (\d+)( .*)$)");
  std::smatch m;
  if (line.kind != TraceLine::Kind::kState || !std::regex_match(line.rest, m, ls))
    return std::nullopt;
  return std::pair(std::stoi(m[2].str()), line.slot + m[1].str() + m[3].str());
}

// S11.6, S12.7: a kept buffer's transaction targeted a node of the buffer's proc, which holds
// one more local strong ref for each such buffer: the kernel's count is cused's plus as many
// kept undelivered buffers (dropped_undelivered) as the kernel lists in the node's proc (whose
// state follows) and cused does not. The trace does not name a transaction's target handle,
// so in a proc of several nodes which one is not pinned (docs/reliability.md).
std::optional<DeviationMatch> undelivered_buffer_node(const At& at) {
  auto kernel_node = node_local_strong(at.kl), cused_node = node_local_strong(at.cl);
  if (!kernel_node || !cused_node || kernel_node->second != cused_node->second ||
      at.kl.step != at.cl.step || kernel_node->first <= cused_node->first)
    return std::nullopt;
  int kept = 0;
  for (std::size_t i = at.k + 1; i < at.kernel.size(); i++) {
    const TraceLine& later = *at.kernel[i];
    if (later.kind != TraceLine::Kind::kState || later.slot != at.kl.slot) break;
    auto buffer = delivered_buffer(later);
    if (!buffer || std::any_of(at.cused.begin(), at.cused.end(),
                               [&](const TraceLine* l) { return l->text == later.text; }))
      continue;
    kept += dropped_undelivered(at.cused_before(), later.slot, *buffer);
  }
  if (kernel_node->first - cused_node->first != kept) return std::nullopt;
  return DeviationMatch{kUndeliveredBufferFreed, "undelivered_buffer_node", 1, 1, {}};
}

// S1.9: the kernel's caller read BR_INCREFS and BR_ACQUIRE for one node before its
// BR_TRANSACTION_COMPLETE and BR_DEAD_REPLY, which cused's caller reads without them: the rest
// of the line (what was sent, the return value, write bytes, extended error) the same, and
// read bytes fewer by exactly those two. A proc was killed at this step.
std::optional<DeviationMatch> release_race(const At& at) {
  const TraceLine &kl = at.kl, &cl = at.cl;
  if (!is_answer(kl) || !kl.is_write_read() || !same_call(kl, cl) || kl.ret != cl.ret ||
      kl.write_consumed != cl.write_consumed || kl.ee_command != cl.ee_command ||
      kl.ee_param != cl.ee_param)
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
  bool killed_now = std::any_of(at.cused.begin(), at.cused.end(), [&](const TraceLine* line) {
    return line->kind == TraceLine::Kind::kSlot && line->op == "killed" && line->step == cl.step;
  });
  if (!killed_now) return std::nullopt;
  return DeviationMatch{kReleaseRace, "release_race", 1, 1, {}};
}

struct PathRule {
  Deviation deviation;
  std::string_view name;
  Rule rule;
};

const std::vector<PathRule>& rules() {
  static const std::vector<PathRule> all = {
      {kFdsOnFuse, "fds_refused", fds_refused},
      {kFdsOnFuse, "fd_reply_refused_to_caller", fd_reply_refused_to_caller},
      {kMunmapUnseen, "munmap_unseen", munmap_unseen},
      {kUndeliveredBufferFreed, "undelivered_buffer", undelivered_buffer},
      {kUndeliveredBufferFreed, "undelivered_buffer_node", undelivered_buffer_node},
      {kReleaseRace, "release_race", release_race},
  };
  return all;
}

}  // namespace

std::vector<std::string_view> deviation_rules() {
  std::vector<std::string_view> names;
  for (const PathRule& rule : rules()) names.push_back(rule.name);
  return names;
}

std::optional<DeviationMatch> known_deviation(std::string_view path, Lines kernel, std::size_t k,
                                              Lines cused, std::size_t c) {
  static const TraceLine kEnd = parse_trace_line("(end of trace)");
  At at{kernel,
        cused,
        k,
        c,
        k < kernel.size() ? *kernel[k] : kEnd,
        c < cused.size() ? *cused[c] : kEnd};
  for (const PathRule& rule : rules()) {
    if (rule.deviation.path != "any" && rule.deviation.path != path) continue;
    if (auto match = rule.rule(at)) return match;
  }
  return std::nullopt;
}

}  // namespace cused::diff

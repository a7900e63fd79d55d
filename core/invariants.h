// SPDX-License-Identifier: GPL-2.0-only
// Consistency checks over core's state, for the fuzzer and tests (docs/design.md section 7: "never
// crash, leak, or lose a buffer on any input"). They read a proc the way binder_logs would, so
// they must run when no request is inside core for that proc (between two ioctls of a
// single-threaded driver such as tests/fuzz): counters are compared with each other, and a
// driver-temporary reference (tmp_refs) still held is itself a violation.
#pragma once

#include <string>
#include <vector>

namespace cused::core {

class Proc;

// One line per broken rule, naming the proc, object and spec id; empty when consistent.
using Violations = std::vector<std::string>;

class InvariantChecker {
 public:
  // A live or released proc:
  //  * refs (S6.1-S6.3): every handle is indexed both ways, holds a strong or a weak count, is
  //    on its node's ref list, and desc 0 names only the context manager's node;
  //  * nodes (S6.4-S6.5): owned by this proc under their own ptr, counters not negative, no
  //    driver temporary left, internal_strong_refs equal to the number of strong refs;
  //  * buffers (S9, S11.1): every allocated buffer has the engine's record of its objects and is
  //    owned by a transaction still in flight or by userspace (delivered, awaiting
  //    BC_FREE_BUFFER); free space plus allocated space is the whole space;
  //  * files (S5.6, S5.7): only a buffer of a transaction still in flight holds files; a
  //    delivered one has installed them all;
  //  * async budget (S9.6, S11.11): never above size/2, and exactly size/2 with no buffer left;
  //  * transactions: outstanding count not negative.
  static Violations check(const Proc& proc);
  // After Proc::release() (S1.9): no thread, node, ref, queued work, delivered death or
  // outstanding transaction left. Buffers may remain, as in the kernel until binder_free_proc:
  // an undelivered oneway's buffer goes with the proc itself (the allocator's destructor), so
  // callers check that the proc is destroyed once nothing else holds it.
  static Violations check_released(const Proc& proc);
  // The sender's files `proc`'s buffer records hold for undelivered transactions (S5.3). Between
  // two requests these are all the PassedFiles core holds: a driver that counts the ones its
  // CallerFiles made (tests/fake_files.h) checks that none outlives its transaction or buffer,
  // and that none is left once every proc is gone.
  static std::size_t held_files(const Proc& proc);

 private:
  static void check_refs(const Proc& proc, Violations& out);
  static void check_nodes(const Proc& proc, Violations& out);
  static void check_buffers(const Proc& proc, Violations& out, bool released);
  static void check_space(const Proc& proc, Violations& out);
};

}  // namespace cused::core

// SPDX-License-Identifier: GPL-2.0-only
// binder's rules for a process's mappings of its buffer space (binder_mmap and the vma it sets
// up, S1.4), as `cused run` applies them to the program's own memory calls. On the FUSE path the
// daemon never sees mmap or mprotect (docs/binderfs.md, differences); under `cused run` the
// filter notifies the calls that could break a rule (seccomp_filter.h): an mmap of a file with
// PROT_WRITE and an mprotect that adds PROT_WRITE. Everything else never reaches the daemon.
//
// The answers are the kernel's, in the kernel's order. Checks the kernel's mm makes before it
// calls binder_mmap (a zero length, an offset off a page, a shared writable mapping of a
// descriptor opened read-only, a descriptor not open for reading) fail the same way for the FUSE
// node, so for them the call goes on to the kernel, which answers it. What comes before
// binder_mmap in the kernel and is not looked at here: choosing the address (MAP_FIXED_NOREPLACE's
// EEXIST, ENOMEM when no room is left); there the kernel's error comes first, cused's EPERM here.
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace cused::run {

// The arguments of an mmap call, as the program passed them.
struct MmapCall {
  std::uint64_t length = 0;
  int prot = 0;
  int flags = 0;
  std::uint64_t offset = 0;
};

// What binder_mmap answers to `call` on a binder node: -EINVAL when the caller's process is not
// the one that opened it, -EPERM for a writable mapping, 0 when the kernel should run the call
// (a readable mapping, or a check of the kernel's mm that fails first). `access_mode`: how the
// descriptor was opened (O_RDONLY, O_WRONLY or O_RDWR).
int binder_mmap_answer(const MmapCall& call, int access_mode, bool caller_is_opener);

// Whether mprotect(start, length, ...) reaches a mapping of a binder node at [begin, end): the
// kernel's binder_mmap clears VM_MAYWRITE, so adding PROT_WRITE there fails with EACCES. A start
// off a page or an empty range is for the kernel to answer (EINVAL, or nothing to do).
bool mprotect_reaches(std::uint64_t start, std::uint64_t length, std::uint64_t begin,
                      std::uint64_t end);

// How process `tid`'s descriptor `fd` was opened (O_RDONLY, O_WRONLY or O_RDWR, from its /proc
// fdinfo flags); -1 when that cannot be read (the descriptor went away).
int descriptor_access_mode(pid_t tid, int fd);

}  // namespace cused::run

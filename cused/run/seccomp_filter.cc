// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/seccomp_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <iterator>

namespace cused::run {

namespace {

// A classic BPF program; libseccomp would build the same, but the version Debian 12 ships
// (2.5.4) cannot ask for WAIT_KILLABLE_RECV.
//   not x86_64 (32-bit or another ABI)    -> allow
//   munmap, mremap                        -> notify: a binder mapping's close (S1.6, S11.9)
//   mmap of a file (not MAP_ANONYMOUS, fd >= 0) with PROT_WRITE
//                                         -> notify: binder refuses writable mappings (S1.4)
//   mprotect adding PROT_WRITE            -> notify: binder mappings cannot become writable (S1.4)
//   not ioctl (x32's numbers differ too)  -> allow
//   ioctl whose cmd has type 'b'          -> notify the listener
//   any other ioctl                       -> allow
// Jump offsets count instructions from the next one; kAllow and kNotify are the last two.
constexpr unsigned char kAllow = 17, kNotify = 18;
constexpr unsigned char to(unsigned char target, unsigned char from) { return target - from - 1; }
constexpr sock_filter kProgram[] = {
    /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, to(kAllow, 1)),
    /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, to(kNotify, 3), 0),
    /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, to(kNotify, 4), 0),
    /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, to(11, 5), 0),
    /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, to(15, 6), 0),
    /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, to(kAllow, 7)),
    // The low half of args[1] (little endian): ioctl's cmd is an unsigned int.
    /* 8 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
    /* 9 */ BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff00),
    /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'b' << 8, to(kNotify, 10), to(kAllow, 10)),
    // mmap: flags (args[3]), then the fd (args[4], an int: its low half's sign bit).
    /* 11 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[3])),
    /* 12 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_ANONYMOUS, to(kAllow, 12), 0),
    /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[4])),
    /* 14 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, to(kAllow, 14), 0),
    // mmap and mprotect: prot (args[2]).
    /* 15 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
    /* 16 */ BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, to(kNotify, 16), to(kAllow, 16)),
    /* 17 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    /* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
};
static_assert(std::size(kProgram) == kNotify + 1);

}  // namespace

int install_binder_ioctl_filter() {
  sock_fprog program{static_cast<unsigned short>(std::size(kProgram)),
                     const_cast<sock_filter*>(kProgram)};
  long listener =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
              SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &program);
  return listener < 0 ? -errno : static_cast<int>(listener);
}

}  // namespace cused::run

#include "cused/run/seccomp_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <iterator>

namespace cused::run {

namespace {

// A classic BPF program of eleven instructions; libseccomp would build the same, but the
// version Debian 12 ships (2.5.4) cannot ask for WAIT_KILLABLE_RECV.
//   not x86_64 (32-bit or another ABI)    -> allow
//   munmap, mremap                        -> notify: a binder mapping's close (S1.6, S11.9)
//   not ioctl (x32's numbers differ too)  -> allow
//   ioctl whose cmd has type 'b'          -> notify the listener
//   any other ioctl                       -> allow
constexpr sock_filter kProgram[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 7),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 6, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, 5, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
    // The low half of args[1] (little endian): ioctl's cmd is an unsigned int.
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[1])),
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff00),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 'b' << 8, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
};

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

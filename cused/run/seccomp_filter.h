// SPDX-License-Identifier: GPL-2.0-only
// The seccomp filter `cused run` puts on a program (docs/run.md): its ioctls of binder's type
// ('b') are notified to a listener, which the daemon serves, and so are the memory calls binder's
// mapping rules need (munmap and mremap; mmap of a file with PROT_WRITE; mprotect adding
// PROT_WRITE: vma_rules.h); every other system call, and every other ioctl, runs in the kernel
// untouched.
#pragma once

namespace cused::run {

// Installs the filter on the calling thread (and so on every thread and child it creates after,
// across exec) and returns the listener's fd, or -errno. Needs CAP_SYS_ADMIN (root): the filter
// is installed without PR_SET_NO_NEW_PRIVS, so setuid programs under it keep working.
//
// SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: once the daemon has received a notification, only a
// fatal signal ends the program's wait. Without it a signal would make the kernel abandon a
// notification the daemon is already serving and restart the system call, which would then run
// the write half of a BINDER_WRITE_READ a second time (the kernel's binder never stops a write
// half for a signal). Signals to a parked read are noticed by the daemon's SignalWatcher instead.
int install_binder_ioctl_filter();

// True when `cmd` is one of the ioctls the filter notifies.
constexpr bool notified_ioctl(unsigned cmd) { return ((cmd >> 8) & 0xff) == 'b'; }

}  // namespace cused::run

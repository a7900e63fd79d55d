// SPDX-License-Identifier: GPL-2.0-only
// libcused-preload.so: LD_PRELOAD it into a binder client to map a cused CUSE node (docs/cuse.md)
// and to give the ioctls whose argument binder never reads the kernel's answer on a cused FUSE
// node (docs/binderfs.md).
//
// CUSE has no mmap: the kernel fails mmap of the node with ENODEV. The shim interposes mmap and
// mmap64, and ioctl for two commands only. For a descriptor that is a cused CUSE device it asks the daemon for
// that open's memfd (the daemon hands it only to the process that opened the node), maps it in
// the caller's place with the caller's address and protection, and tells the daemon where the
// mapping is. Any other mmap goes straight to the kernel.
//
// ioctl: BINDER_THREAD_EXIT and BINDER_SET_CONTEXT_MGR never read their argument, and libbinder
// and Android's servicemanager pass NULL. On a FUSE node (cused's binderfs) the kernel's FUSE
// copies _IOC_SIZE bytes from the argument before the daemon sees the request, so NULL fails with
// EFAULT; the shim passes a dummy instead for those two commands on a FUSE regular file. Every
// other ioctl goes to the kernel as it is.
//
// Not interposed, on purpose: munmap (the kernel's binder keeps a proc "mapped" after munmap too,
// a second mmap is still EBUSY, S1.4), close and dup (the open lives in the kernel's file; its
// release reaches the daemon through CUSE), fork (the mapping is MADV_DONTFORK, the kernel's
// VM_DONTCOPY). A raw syscall(SYS_mmap) bypasses the shim and gets ENODEV.
// Meson builds with _FILE_OFFSET_BITS=64, under which glibc's headers name `mmap` "mmap64": the
// shim defines both symbols itself.
#undef _FILE_OFFSET_BITS
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "client/preload/cuse_fd.h"
#include "client/preload/map_client.h"
#include "uapi/binder.h"
#include "uapi/cused_cuse.h"

namespace {

// The kernel's mmap, not the next interposer's: no dlsym (it may allocate, and the shim may run
// inside an allocator's mmap).
void* kernel_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, length, prot, flags, fd, offset));
}

void* fail(int error) {
  errno = error;
  return MAP_FAILED;
}

// Maps the open behind `fd` of cused CUSE device `name`. False when the device is not cused's
// (no socket answers for it): the caller then leaves the mmap to the kernel.
bool map_cuse_node(const char* name, int fd, void* addr, std::size_t length, int prot, int flags,
                   void** result) {
  const char* dir = std::getenv(cused::uapi::kCuseSocketDirEnv);
  char path[256];
  int written =
      std::snprintf(path, sizeof path, "%s/%s.sock", dir ? dir : cused::uapi::kCuseSocketDir, name);
  if (written < 0 || static_cast<std::size_t>(written) >= sizeof path) return false;
  cused::preload::MapConnection connection;
  if (connection.connect(path) != 0) return false;
  cused::uapi::cused_cuse_map_token token{};
  if (ioctl(fd, cused::uapi::CUSED_CUSE_GET_MAP_TOKEN, &token) != 0) return false;
  int memfd = -1;
  if (int error = connection.request(token.token, static_cast<unsigned>(prot), length, &memfd)) {
    *result = fail(error);
    return true;
  }
  // Shared whatever the caller asked: the daemon writes buffers through its own mapping of the
  // memfd. Offset 0: binder ignores the offset and starts the buffer space at the mapping.
  void* mapped = kernel_mmap(addr, length, prot, (flags & ~MAP_TYPE) | MAP_SHARED, memfd, 0);
  int error = mapped == MAP_FAILED ? errno : 0;
  close(memfd);
  if (error == 0) madvise(mapped, length, MADV_DONTFORK);
  int recorded = connection.report(error, reinterpret_cast<std::uintptr_t>(mapped), length);
  if (error == 0 && recorded != 0) {
    munmap(mapped, length);
    error = recorded;
  }
  *result = error ? fail(error) : mapped;
  return true;
}

void* shim_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  char name[256];
  void* result = nullptr;
  if (fd >= 0 && !(flags & MAP_ANONYMOUS) &&
      cused::preload::cuse_device_name(fd, "/sys", name, sizeof name) &&
      map_cuse_node(name, fd, addr, length, prot, flags, &result))
    return result;
  return kernel_mmap(addr, length, prot, flags, fd, offset);
}

// A regular file on a FUSE filesystem: what a cused binderfs node is (a CUSE node is a character
// device, whose ioctls are unrestricted and need no help).
bool on_fuse_node(int fd) {
  constexpr long kFuseSuperMagic = 0x65735546;
  struct stat st {};
  struct statfs fs {};
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && fstatfs(fd, &fs) == 0 &&
         fs.f_type == kFuseSuperMagic;
}

long shim_ioctl(int fd, unsigned long request, void* arg) {
  std::int32_t unread = 0;  // what FUSE copies in; the daemon ignores it, as the kernel would
  bool unread_argument = request == BINDER_THREAD_EXIT || request == BINDER_SET_CONTEXT_MGR;
  if (unread_argument && arg == nullptr && on_fuse_node(fd)) arg = &unread;
  return syscall(SYS_ioctl, fd, request, arg);
}

}  // namespace

extern "C" {

// Tells a process (and the conformance tests) that the shim is loaded.
__attribute__((visibility("default"))) extern const int cused_preload_active = 1;

__attribute__((visibility("default"))) int ioctl(int fd, unsigned long request, ...) noexcept {
  va_list arguments;
  va_start(arguments, request);
  void* arg = va_arg(arguments, void*);
  va_end(arguments);
  return static_cast<int>(shim_ioctl(fd, request, arg));
}

__attribute__((visibility("default"))) void* mmap(void* addr, std::size_t length, int prot,
                                                  int flags, int fd, off_t offset) noexcept {
  return shim_mmap(addr, length, prot, flags, fd, offset);
}

__attribute__((visibility("default"))) void* mmap64(void* addr, std::size_t length, int prot,
                                                    int flags, int fd, off64_t offset) noexcept {
  return shim_mmap(addr, length, prot, flags, fd, offset);
}

}  // extern "C"

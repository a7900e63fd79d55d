// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/vma_rules.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "cused/host/read_small_file.h"

namespace cused::run {

namespace {

std::uint64_t page_size() {
  static const auto size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

bool shared(int flags) {
  const int type = flags & MAP_TYPE;
  return type == MAP_SHARED || type == MAP_SHARED_VALIDATE;
}

// The checks of the kernel's mm that come before the file's own mmap (the syscall's offset check
// and do_mmap's), as far as they can fail for a binder node.
bool reaches_driver(const MmapCall& call, int access_mode) {
  const int type = call.flags & MAP_TYPE;
  if (call.length == 0 || call.offset % page_size() != 0) return false;  // EINVAL
  if (type != MAP_SHARED && type != MAP_PRIVATE && type != MAP_SHARED_VALIDATE) return false;
  if (access_mode == O_WRONLY) return false;  // EACCES: not open for reading
  // EACCES: a shared writable mapping of a descriptor not open for writing.
  if (shared(call.flags) && (call.prot & PROT_WRITE) && access_mode != O_RDWR) return false;
  return true;
}

}  // namespace

int binder_mmap_answer(const MmapCall& call, int access_mode, bool caller_is_opener) {
  if (!reaches_driver(call, access_mode)) return 0;
  // binder_mmap: only the process that opened the node maps it, and never writable (S1.4).
  if (!caller_is_opener) return -EINVAL;
  if (call.prot & PROT_WRITE) return -EPERM;
  return 0;
}

bool mprotect_reaches(std::uint64_t start, std::uint64_t length, std::uint64_t begin,
                      std::uint64_t end) {
  if (length == 0 || start % page_size() != 0) return false;
  const std::uint64_t last = start + (length - 1);  // the range's last byte (no overflow)
  return last >= start && start < end && begin <= last;
}

int descriptor_access_mode(pid_t tid, int fd) {
  std::string text;
  const std::string path = "/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(fd);
  if (host::read_small_file(path, text) != 0) return -1;
  // "flags:\t0100002": octal, as the kernel prints f_flags.
  const auto at = text.find("flags:");
  if (at == std::string::npos) return -1;
  return static_cast<int>(std::strtol(text.c_str() + at + 6, nullptr, 8)) & O_ACCMODE;
}

}  // namespace cused::run

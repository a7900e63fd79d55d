// SPDX-License-Identifier: GPL-2.0-only
#include "client/preload/cuse_fd.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace cused::preload {

bool cuse_device_name(int fd, const char* sysfs_root, char* name, std::size_t size) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  char link[512];
  int written = std::snprintf(link, sizeof link, "%s/dev/char/%u:%u", sysfs_root, major(st.st_rdev),
                              minor(st.st_rdev));
  if (written < 0 || static_cast<std::size_t>(written) >= sizeof link) return false;
  char target[512];
  ssize_t length = readlink(link, target, sizeof target - 1);
  if (length <= 0) return false;
  target[length] = '\0';
  // ".../devices/virtual/cuse/NAME": the device's directory sits in the cuse class's.
  char* base = std::strrchr(target, '/');
  if (!base || base == target) return false;
  *base = '\0';
  const char* class_dir = std::strrchr(target, '/');
  class_dir = class_dir ? class_dir + 1 : target;
  if (std::strcmp(class_dir, "cuse") != 0) return false;
  std::size_t name_length = std::strlen(base + 1);
  if (name_length == 0 || name_length >= size) return false;
  std::memcpy(name, base + 1, name_length + 1);
  return true;
}

}  // namespace cused::preload

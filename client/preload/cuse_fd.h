// SPDX-License-Identifier: GPL-2.0-only
// Is this descriptor a CUSE character device, and which? The shim asks on every mmap of a
// descriptor, so the answer costs one fstat for anything that is not a character device and one
// readlink for one that is, and allocates nothing (the mmap may come from inside an allocator).
#pragma once

#include <cstddef>

namespace cused::preload {

// True when `fd` is a character device that the kernel's CUSE made: its sysfs node,
// <sysfs_root>/dev/char/MAJOR:MINOR, links into a "cuse" class directory. Its device name
// (/dev/<name>) is then copied to `name` (which holds `size` bytes, the terminator included).
bool cuse_device_name(int fd, const char* sysfs_root, char* name, std::size_t size);

}  // namespace cused::preload

// SPDX-License-Identifier: GPL-2.0-only
// Reads a small file (a /proc or /sys attribute) whole, with plain system calls. Unlike a
// std::ifstream, it cannot throw: libstdc++'s filebuf throws from underflow() when read() fails,
// whatever the stream's exception mask, and /proc/<pid>/attr/current opens fine and then fails
// its read with EINVAL on a kernel whose LSMs do not provide it.
#pragma once

#include <cstddef>
#include <string>

namespace cused::host {

// The first `limit` bytes of `path` into `out`. Returns 0, or the errno of the open or read that
// failed (out is then empty).
int read_small_file(const std::string& path, std::string& out, std::size_t limit = 4096) noexcept;

}  // namespace cused::host

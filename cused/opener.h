// SPDX-License-Identifier: GPL-2.0-only
// What every open of a binder node starts from, in both frontends (binderfs and CUSE): who opened
// it (S1.2) and the memfd that will hold the proc's buffer space (S1.4).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string_view>

#include "core/buffer_file.h"
#include "core/device.h"

struct fuse_ctx;

namespace cused {

// The opener's thread group, thread and euid from the FUSE request's context.
core::OpenerIdentity opener_of(const fuse_ctx& ctx);

// A memfd for the largest buffer space a client can map, named after the device and the opener
// (visible in /proc/<daemon>/fd). Throws std::system_error.
std::unique_ptr<core::BufferFile> create_buffer_space(std::string_view device, pid_t opener_tid);

}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
#include "cused/opener.h"

#include <fmt/format.h>

#include "cused/fuse/fuse.h"
#include "cused/host/memfd_buffer_file.h"
#include "cused/thread_groups.h"
#include "uapi/binder.h"

namespace cused {

core::OpenerIdentity opener_of(const fuse_ctx& ctx) {
  return core::OpenerIdentity{read_thread_group(ctx.pid), ctx.pid, ctx.uid};
}

std::unique_ptr<core::BufferFile> create_buffer_space(std::string_view device, pid_t opener_tid) {
  return host::MemfdBufferFile::create(fmt::format("cused-{}-{}", device, opener_tid),
                                       uapi::kMaxMappedSize);
}

}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
#include "cused/cuse/device.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "core/buffer_file.h"
#include "core/ioctl_argument.h"
#include "cused/devices/control_requests.h"
#include "cused/fuse/ioctl_completion.h"
#include "cused/fuse/request.h"
#include "cused/opener.h"
#include "cused/process_memory.h"
#include "cused/request/caller_scheduling.h"
#include "uapi/binder.h"
#include "uapi/cused_cuse.h"

namespace cused::cuse {

namespace {

Device& self(fuse_req_t req) { return *static_cast<Device*>(fuse_req_userdata(req)); }

void reply_error(fuse_req_t req, int error) { fuse::reply_err(req, error); }

}  // namespace

Device::Device(devices::DeviceRegistry& registry, std::shared_ptr<core::Device> device)
    : registry_(registry), device_(std::move(device)) {}

Device::~Device() { release_all(); }

std::shared_ptr<ShimMapping> Device::mapping_of(std::uint64_t token) const {
  sync::LockGuard guard(lock_);
  auto it = by_token_.find(token);
  return it == by_token_.end() ? nullptr : it->second;
}

void Device::release_all() {
  std::map<const OpenFile*, std::unique_ptr<OpenFile>> files;
  {
    sync::LockGuard guard(lock_);
    files.swap(open_files_);
    by_token_.clear();
  }
  for (auto& [key, file] : files) {
    registry_.remove_open(*file->proc);
    file->proc->release();
  }
}

std::uint64_t Device::new_token() const {
  // Random, so that a token names one open and cannot be guessed from another's; the credential
  // check, not the token, decides who may map it.
  for (;;) {
    std::uint64_t token = 0;
    if (getrandom(&token, sizeof token, 0) != sizeof token) continue;
    if (token != 0 && !by_token_.contains(token)) return token;
  }
}

void Device::open(fuse_req_t req, fuse_file_info* fi) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  core::OpenerIdentity opener = opener_of(*ctx);
  std::unique_ptr<core::BufferFile> buffers;
  std::shared_ptr<ShimMapping> mapping;
  try {
    buffers = create_buffer_space(name(), ctx->pid);
    mapping = std::make_shared<ShimMapping>(opener.pid, buffers->fd());
  } catch (const std::system_error& error) {
    return reply_error(req, error.code().value());
  }
  auto proc = core::Proc::open(device_, opener, std::move(buffers),
                               std::make_unique<ShimMappingFinder>(mapping, name()));
  // Every open of the node is the same character device file: no identity of its own.
  registry_.add_open(proc, (fi->flags & O_NONBLOCK) != 0);
  auto file = std::make_unique<OpenFile>(std::move(proc), (fi->flags & O_NONBLOCK) != 0,
                                         std::move(mapping));
  fi->fh = reinterpret_cast<std::uint64_t>(file.get());
  fi->nonseekable = 1;
  {
    sync::LockGuard guard(lock_);
    file->token = new_token();
    by_token_.emplace(file->token, file->mapping);
    open_files_.emplace(file.get(), std::move(file));
  }
  fuse::reply_open(req, fi);
}

void Device::release(fuse_req_t req, fuse_file_info* fi) {
  std::unique_ptr<OpenFile> file;
  {
    sync::LockGuard guard(lock_);
    auto node = open_files_.extract(reinterpret_cast<const OpenFile*>(fi->fh));
    if (!node.empty()) {
      file = std::move(node.mapped());
      by_token_.erase(file->token);
    }
  }
  if (file) {
    registry_.remove_open(*file->proc);
    run_guarded(
        RequestEntry::kCuse, "release", [&] { file->proc->release(); }, [](int) {});  // S1.9
  }
  file.reset();  // closes the memfd before the release is answered
  fuse::reply_err(req, 0);
}

void Device::ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg, fuse_file_info* fi) {
  auto& file = *reinterpret_cast<OpenFile*>(fi->fh);
  if (cmd == uapi::CUSED_CUSE_GET_MAP_TOKEN) return token_ioctl(req, file, arg);
  if (devices::is_control_ioctl(cmd)) return control_ioctl(req, cmd, arg);
  binder_ioctl(req, file, cmd, arg);
}

// binder-control's requests, on the node: the argument comes from and goes back to the caller's
// memory (the ioctl is unrestricted). binder-control is root's alone; a CUSE node may be open to
// anyone (--mode), so only root and the daemon's user are served here, the others get EPERM.
void Device::control_ioctl(fuse_req_t req, unsigned cmd, std::uint64_t arg) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  if (!devices::may_control(ctx->uid)) return reply_error(req, EPERM);
  ProcessMemory caller(ctx->pid);
  std::vector<std::byte> in((_IOC_DIR(cmd) & _IOC_WRITE) ? _IOC_SIZE(cmd) : 0);
  if (!in.empty() && caller.read(arg, in.data(), in.size()) != 0) return reply_error(req, EFAULT);
  devices::ControlAnswer answer =
      devices::serve_control(registry_, {cmd, in, ctx->uid, "/dev/" + name()});
  if (answer.error != 0) return reply_error(req, answer.error);
  if (!answer.out.empty() && caller.write(arg, answer.out.data(), answer.out.size()) != 0)
    return reply_error(req, EFAULT);
  fuse::reply_ioctl(req, 0, nullptr, 0);
}

void Device::token_ioctl(fuse_req_t req, const OpenFile& file, std::uint64_t arg) {
  // Any holder of the descriptor may learn the token: it names the open, the map socket's
  // credential check decides who maps it.
  uapi::cused_cuse_map_token answer{file.token};
  if (ProcessMemory(fuse_req_ctx(req)->pid).write(arg, &answer, sizeof answer) != 0)
    return reply_error(req, EFAULT);
  fuse::reply_ioctl(req, 0, nullptr, 0);
}

void Device::binder_ioctl(fuse_req_t req, OpenFile& file, unsigned cmd, std::uint64_t arg) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  // Exactly what binder_ioctl copies, so that an argument it never reads may be NULL
  // (BINDER_THREAD_EXIT, BINDER_SET_CONTEXT_MGR). A failed copy-in reaches core as an empty
  // argument, and core answers with the kernel's errno for that command.
  core::IoctlArgument argument = core::kernel_ioctl_argument(cmd);
  std::array<std::byte, sizeof(binder_write_read)> in;
  std::size_t in_size = std::min(argument.copy_in, in.size());
  if (in_size > 0 && ProcessMemory(ctx->pid).read(arg, in.data(), in_size) != 0) in_size = 0;
  core::IoctlRequest request{file.thread_groups.of(ctx->pid),
                             ctx->pid,
                             ctx->uid,
                             cmd,
                             std::span<const std::byte>(in.data(), in_size),
                             file.nonblock,
                             {},
                             arg};
  auto completion = std::make_unique<fuse::IoctlCompletion>(
      req, ctx->pid, argument.copy_out, file.proc, interrupts_, arg, argument.copy_out_errno);
  completion->watch_interrupts();
  CallerScheduling scheduling(ctx->pid, serves_at_caller_priority(*file.proc));
  file.proc->ioctl(request, std::move(completion));
}

void Device::poll(fuse_req_t req, fuse_file_info* fi, fuse_pollhandle* ph) {
  auto& file = *reinterpret_cast<OpenFile*>(fi->fh);
  fuse::reply_proc_poll(req, *file.proc, fuse_req_ctx(req)->pid, ph);
}

namespace {

// Every operation runs guarded (cused/fuse/request.h): an exception fails only its request.
void op_open(fuse_req_t req, fuse_file_info* fi) {
  fuse::serve(req, RequestEntry::kCuse, "open", [&] { self(req).open(req, fi); });
}
// A release cannot fail; Device::release guards the proc's teardown itself.
void op_release(fuse_req_t req, fuse_file_info* fi) { self(req).release(req, fi); }
void op_ioctl(fuse_req_t req, int cmd, void* arg, fuse_file_info* fi, unsigned, const void*,
              std::size_t, std::size_t) {
  // FUSE_IOCTL_COMPAT (a 32-bit caller) needs nothing else: protocol 8's structs are the same
  // for both, and `arg` is the caller's address either way.
  fuse::serve(req, RequestEntry::kCuse, "ioctl", [&] {
    self(req).ioctl(req, static_cast<unsigned>(cmd), reinterpret_cast<std::uint64_t>(arg), fi);
  });
}
void op_poll(fuse_req_t req, fuse_file_info* fi, fuse_pollhandle* ph) {
  fuse::serve(req, RequestEntry::kCuse, "poll",
              [&] { self(req).poll(req, fi, std::exchange(ph, nullptr)); });
  if (ph) fuse_pollhandle_destroy(ph);  // the handler failed before it took the handle
}

cuse_lowlevel_ops make_operations() {
  cuse_lowlevel_ops ops{};
  ops.open = op_open;
  ops.release = op_release;
  ops.ioctl = op_ioctl;
  ops.poll = op_poll;
  return ops;
}

}  // namespace

const cuse_lowlevel_ops& Device::operations() {
  static const cuse_lowlevel_ops ops = make_operations();
  return ops;
}

}  // namespace cused::cuse

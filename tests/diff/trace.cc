// SPDX-License-Identifier: GPL-2.0-only
#include "tests/diff/trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <vector>

#include "client/return_stream.h"
#include "core/stats.h"
#include "tests/fuzz/script_input.h"
#include "uapi/binder.h"

namespace cused::diff {

namespace {

std::string hex(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

// "@0x40" for an address inside the caller's buffer space, "no-space" or "unmapped" otherwise.
std::string where(std::uint64_t address, BufferSpace space) {
  auto base = reinterpret_cast<std::uint64_t>(space.base);
  if (space.base && address >= base && address - base < space.size)
    return fmt::format("@{:#x}", address - base);
  if (!address) return "null";
  return space.base || space.was_mapped ? "no-space" : "unmapped";
}

std::span<const std::byte> in_space(std::uint64_t address, std::size_t len, BufferSpace space) {
  auto base = reinterpret_cast<std::uint64_t>(space.base);
  if (!space.base || address < base || address - base > space.size ||
      len > space.size - (address - base))
    return {};
  return {space.base + (address - base), len};
}

template <typename T>
T read_at(std::span<const std::byte> data, std::size_t offset) {
  T value{};
  if (offset <= data.size() && sizeof value <= data.size() - offset)
    std::memcpy(&value, data.data() + offset, sizeof value);
  return value;
}

// One object of a delivered buffer, as the receiver sees it after translation (S5).
std::string render_object(std::span<const std::byte> data, std::size_t offset, BufferSpace space) {
  auto type = read_at<std::uint32_t>(data, offset);
  switch (type) {
    case BINDER_TYPE_BINDER:
    case BINDER_TYPE_WEAK_BINDER: {
      auto obj = read_at<flat_binder_object>(data, offset);
      return fmt::format("{}(ptr {:#x} cookie {:#x} flags {:#x})",
                         type == BINDER_TYPE_BINDER ? "binder" : "weak_binder", obj.binder,
                         obj.cookie, obj.flags);
    }
    case BINDER_TYPE_HANDLE:
    case BINDER_TYPE_WEAK_HANDLE: {
      auto obj = read_at<flat_binder_object>(data, offset);
      return fmt::format("{}({} flags {:#x} cookie {:#x})",
                         type == BINDER_TYPE_HANDLE ? "handle" : "weak_handle", obj.handle,
                         obj.flags, obj.cookie);
    }
    case BINDER_TYPE_FD: {
      auto obj = read_at<binder_fd_object>(data, offset);
      return fmt::format("fd({} cookie {:#x})", obj.fd, obj.cookie);
    }
    case BINDER_TYPE_FDA: {
      auto obj = read_at<binder_fd_array_object>(data, offset);
      return fmt::format("fda({} parent {} at {})", obj.num_fds, obj.parent, obj.parent_offset);
    }
    case BINDER_TYPE_PTR: {
      auto obj = read_at<binder_buffer_object>(data, offset);
      return fmt::format(
          "ptr({} len {} flags {:#x} parent {} at {}: {})", where(obj.buffer, space), obj.length,
          obj.flags, obj.parent, obj.parent_offset,
          hex(in_space(obj.buffer, std::min<std::uint64_t>(obj.length, 256), space)));
    }
    default:
      return fmt::format("type {:#x}", type);
  }
}

// How many payload bytes the object at `offset` covers (its type's struct).
std::size_t object_size(std::span<const std::byte> data, std::size_t offset) {
  switch (read_at<std::uint32_t>(data, offset)) {
    case BINDER_TYPE_FD:
      return sizeof(binder_fd_object);
    case BINDER_TYPE_FDA:
      return sizeof(binder_fd_array_object);
    case BINDER_TYPE_PTR:
      return sizeof(binder_buffer_object);
    default:
      return sizeof(flat_binder_object);
  }
}

std::string render_transaction(const binder_transaction_data& tr, BufferSpace space) {
  std::string out = fmt::format(
      " target {:#x} cookie {:#x} code {:#x} flags {:#x} pid={} euid {} data {} {} offsets {} {}",
      tr.target.ptr, tr.cookie, tr.code, tr.flags, tr.sender_pid, tr.sender_euid, tr.data_size,
      where(tr.data.ptr.buffer, space), tr.offsets_size, where(tr.data.ptr.offsets, space));
  std::span<const std::byte> data = in_space(tr.data.ptr.buffer, tr.data_size, space);
  std::span<const std::byte> offsets = in_space(tr.data.ptr.offsets, tr.offsets_size, space);
  if (data.size() != tr.data_size || offsets.size() != tr.offsets_size) return out + " unreadable";
  // The payload with every object replaced by its translation: raw object bytes hold pointers.
  std::vector<bool> object_byte(data.size());
  std::string objects;
  for (std::size_t i = 0; i + sizeof(binder_size_t) <= offsets.size(); i += sizeof(binder_size_t)) {
    auto at = read_at<binder_size_t>(offsets, i);
    objects += " " + render_object(data, at, space);
    for (std::size_t b = at; b < data.size() && b < at + object_size(data, at); b++)
      object_byte[b] = true;
  }
  std::string payload;
  for (std::size_t b = 0; b < data.size(); b++)
    payload += object_byte[b] ? std::string("..") : hex(data.subspan(b, 1));
  return out + " [" + payload + "]" + objects;
}

std::string render_return(const client::ReturnItem& item, BufferSpace space) {
  std::string_view name = core::return_name(item.cmd);
  std::string out = name.empty() ? fmt::format("BR {:#x}", item.cmd) : std::string(name);
  switch (item.cmd) {
    case BR_TRANSACTION:
    case BR_REPLY:
      return out + render_transaction(item.as<binder_transaction_data>(), space);
    case BR_TRANSACTION_SEC_CTX: {
      auto tr = item.as<binder_transaction_data_secctx>();
      // The label differs by LSM (docs/binderfs.md, S4.9): only whether there is one.
      return out + render_transaction(tr.transaction_data, space) +
             (tr.secctx ? " secctx" : " no-secctx");
    }
    default:
      return item.payload.empty() ? out : out + " " + hex(item.payload);
  }
}

}  // namespace

std::string result_text(int ret) {
  if (ret >= 0) return std::to_string(ret);
  const char* name = strerrorname_np(-ret);
  return name ? name : std::to_string(ret);
}

// "BC_TRANSACTION[binder,fd] BC_FREE_BUFFER": what the caller sent, for the reader of a trace
// (and for docs/binderfs.md's deviations that depend on it).
std::string render_commands(std::span<const std::byte> commands) {
  std::string out;
  client::for_each_return(commands, [&](const client::ReturnItem& item) {
    std::string_view name = core::command_name(item.cmd);
    out += " " + (name.empty() ? fmt::format("BC {:#x}", item.cmd) : std::string(name));
    if (item.cmd != BC_TRANSACTION && item.cmd != BC_REPLY && item.cmd != BC_TRANSACTION_SG &&
        item.cmd != BC_REPLY_SG)
      return;
    auto tr = item.as<binder_transaction_data>();
    // Damaged parcels (tests/fuzz/script.h) point elsewhere or claim huge sizes: not read.
    if (tr.data.ptr.buffer == fuzz::kBogusAddress || tr.data_size > 4096 || tr.offsets_size > 4096)
      return void(out += "[?]");
    std::vector<std::string> types;
    for (binder_size_t i = 0; i + sizeof(binder_size_t) <= tr.offsets_size && i < 64 * 8;
         i += sizeof(binder_size_t)) {
      binder_size_t at;
      std::memcpy(&at, reinterpret_cast<const std::byte*>(tr.data.ptr.offsets) + i, sizeof at);
      if (at + sizeof(std::uint32_t) > tr.data_size) continue;
      std::uint32_t type;
      std::memcpy(&type, reinterpret_cast<const std::byte*>(tr.data.ptr.buffer) + at, sizeof type);
      types.push_back(type == BINDER_TYPE_FD    ? "fd"
                      : type == BINDER_TYPE_FDA ? "fda"
                      : type == BINDER_TYPE_PTR ? "ptr"
                                                : "obj");
    }
    out += "[" + fmt::format("{}", fmt::join(types, ",")) + "]";
  });
  return out;
}

std::string render_write_read(int ret, const binder_write_read& bwr,
                              std::span<const std::byte> read_buffer, BufferSpace space) {
  std::string out = fmt::format("ret {} wc {}/{} rc {}/{}:", result_text(ret), bwr.write_consumed,
                                bwr.write_size, bwr.read_consumed, bwr.read_size);
  std::size_t consumed = std::min<std::size_t>(bwr.read_consumed, read_buffer.size());
  bool whole = client::for_each_return(read_buffer.first(consumed), [&](const auto& item) {
    out += " " + render_return(item, space) + ";";
  });
  if (!whole) out += " (cut short)";
  return out;
}

std::string render_ioctl(unsigned cmd, int ret, std::span<const std::byte> arg) {
  std::string out = "ret " + result_text(ret);
  if (ret < 0 || !(_IOC_DIR(cmd) & _IOC_READ)) return out;
  if (cmd == BINDER_GET_EXTENDED_ERROR && arg.size() >= sizeof(binder_extended_error)) {
    binder_extended_error ee{};
    std::memcpy(&ee, arg.data(), sizeof ee);
    return out + fmt::format(" ee {} {}", core::return_name(ee.command), ee.param);
  }
  if (cmd == BINDER_GET_FROZEN_INFO && arg.size() >= sizeof(binder_frozen_status_info)) {
    binder_frozen_status_info info{};  // pid= so the coordinator names the proc's role
    std::memcpy(&info, arg.data(), sizeof info);
    return out + fmt::format(" frozen pid={} sync_recv {:#x} async_recv {:#x}", info.pid,
                             info.sync_recv, info.async_recv);
  }
  return out + " out " + hex(arg);
}

}  // namespace cused::diff

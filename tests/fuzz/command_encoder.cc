// SPDX-License-Identifier: GPL-2.0-only
#include "tests/fuzz/command_encoder.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "tests/fuzz/script.h"

namespace cused::fuzz {

namespace {

template <typename T>
void put(std::vector<std::byte>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof value);
}

}  // namespace

std::uint64_t ClientMemory::place(const void* data, std::size_t len) {
  std::size_t at = (used_ + 7) & ~std::size_t{7};
  if (at + len > memory_.size()) return 0;
  if (len) std::memcpy(memory_.data() + at, data, len);
  used_ = at + len;
  return reinterpret_cast<std::uint64_t>(memory_.data() + at);
}

bool ClientMemory::contains(std::uint64_t address, std::size_t len) const {
  auto start = reinterpret_cast<std::uint64_t>(memory_.data());
  return address >= start && len <= memory_.size() && address - start <= memory_.size() - len;
}

std::uint64_t CommandEncoder::delivered_buffer(std::uint8_t index) {
  if (owed_.buffers.empty()) return 0;  // nothing delivered: a bogus free (S9.9)
  auto it = owed_.buffers.begin() + index % owed_.buffers.size();
  std::uint64_t address = *it;
  owed_.buffers.erase(it);
  return address;
}

void CommandEncoder::command(ScriptInput& in, std::vector<std::byte>& out) {
  auto kind = static_cast<Cmd>(in.u8() % static_cast<std::uint8_t>(Cmd::kCount));
  switch (kind) {
    case Cmd::kTransaction:
      return transaction(in, out);
    case Cmd::kFreeBuffer: {
      std::uint8_t index = in.u8();
      std::uint64_t address = index >= 0xf0 ? in.value<std::uint64_t>() : delivered_buffer(index);
      put(out, BC_FREE_BUFFER);
      return put(out, address);
    }
    case Cmd::kRefcount: {
      std::uint32_t cmd = BC_INCREFS + (in.u8() % 4);
      put(out, cmd);
      return put(out, in.handle());
    }
    case Cmd::kRefDone: {
      bool acquire = in.u8() & 1;
      std::uint8_t index = in.u8();
      auto& pending = acquire ? owed_.acquires : owed_.increfs;
      binder_ptr_cookie pc{};
      if (index == 0xff) {
        pc = in.value<binder_ptr_cookie>();
      } else if (!pending.empty()) {
        pc = pending.front();
        pending.pop_front();
      }
      put(out, acquire ? BC_ACQUIRE_DONE : BC_INCREFS_DONE);
      return put(out, pc);
    }
    case Cmd::kLooper:
      return put(out, static_cast<std::uint32_t>(BC_REGISTER_LOOPER + in.u8() % 3));
    case Cmd::kDeath: {
      bool clear = in.u8() & 1;
      std::uint32_t handle = in.handle();
      binder_handle_cookie hc{handle, in.u8() % 4u};
      put(out, clear ? BC_CLEAR_DEATH_NOTIFICATION : BC_REQUEST_DEATH_NOTIFICATION);
      return put(out, hc);
    }
    case Cmd::kDeadBinderDone: {
      std::uint8_t index = in.u8();
      binder_uintptr_t cookie;
      if (index == 0xff) {
        cookie = in.u8() % 4;
      } else if (!owed_.deaths.empty()) {
        cookie = owed_.deaths.front();
        owed_.deaths.pop_front();
      } else {
        cookie = index % 4;
      }
      put(out, BC_DEAD_BINDER_DONE);
      return put(out, cookie);
    }
    case Cmd::kFreeze: {
      std::uint8_t which = in.u8() % 3;
      std::uint32_t handle = in.handle();
      binder_handle_cookie hc{handle, in.u8() % 4u};
      if (which == 2) {
        put(out, uapi::BC_FREEZE_NOTIFICATION_DONE);
        binder_uintptr_t cookie = hc.cookie;  // the struct is packed: no reference into it
        return put(out, cookie);
      }
      put(out, which ? uapi::BC_CLEAR_FREEZE_NOTIFICATION : uapi::BC_REQUEST_FREEZE_NOTIFICATION);
      return put(out, hc);
    }
    case Cmd::kRaw: {
      put(out, in.value<std::uint32_t>());
      std::array<std::byte, 64> raw{};
      std::size_t len = in.u8() % raw.size();
      in.bytes(raw.data(), len);
      out.insert(out.end(), raw.begin(), raw.begin() + len);
      return;
    }
    case Cmd::kCount:
      return;
  }
}

// One object of a parcel; `data` and `offsets` grow.
void CommandEncoder::object(ScriptInput& in, std::vector<std::byte>& data,
                            std::vector<binder_size_t>& offsets) {
  auto kind = static_cast<Obj>(in.u8() % static_cast<std::uint8_t>(Obj::kCount));
  auto add = [&](const auto& obj) {
    offsets.push_back(data.size());
    put(data, obj);
  };
  switch (kind) {
    case Obj::kBinder:
    case Obj::kWeakBinder: {
      flat_binder_object obj{};
      obj.hdr.type = kind == Obj::kBinder ? BINDER_TYPE_BINDER : BINDER_TYPE_WEAK_BINDER;
      obj.binder = 0x1000 * (1 + in.u8() % 4);
      obj.cookie = in.u8();
      if (kind == Obj::kBinder) obj.flags = in.value<std::uint16_t>();
      return add(obj);
    }
    case Obj::kHandle:
    case Obj::kWeakHandle: {
      flat_binder_object obj{};
      obj.hdr.type = kind == Obj::kHandle ? BINDER_TYPE_HANDLE : BINDER_TYPE_WEAK_HANDLE;
      obj.handle = in.handle();
      return add(obj);
    }
    case Obj::kFd: {
      binder_fd_object obj{};
      obj.hdr.type = BINDER_TYPE_FD;
      obj.fd = in.u8();
      return add(obj);
    }
    case Obj::kFda: {
      binder_fd_array_object obj{};
      obj.hdr.type = BINDER_TYPE_FDA;
      obj.num_fds = in.u8() % 4;
      obj.parent = in.u8() % 4;
      obj.parent_offset = in.u8();
      return add(obj);
    }
    case Obj::kPtr: {
      binder_buffer_object obj{};
      obj.hdr.type = BINDER_TYPE_PTR;
      std::uint8_t where = in.u8() % 3;
      obj.length = 8 * std::size_t{in.u8()};
      obj.buffer = where == 0 ? memory_.reserve(obj.length) : where == 1 ? kBogusAddress : mapping_;
      std::uint8_t parent = in.u8();
      obj.flags = (parent & 0x80) ? BINDER_BUFFER_FLAG_HAS_PARENT : 0;
      obj.parent = parent % 4;
      obj.parent_offset = in.u8();
      return add(obj);
    }
    case Obj::kGarbage:
      put(data, std::uint64_t{0x6161616161616161});
      offsets.push_back(in.u8());
      return;
    case Obj::kCount:
      return;
  }
}

void CommandEncoder::transaction(ScriptInput& in, std::vector<std::byte>& out) {
  std::uint8_t mode = in.u8();
  binder_transaction_data tr{};
  tr.target.handle = in.handle();
  tr.code = in.u8();
  tr.flags = in.u8();
  std::vector<std::byte> data(in.u8() % 64);
  in.bytes(data.data(), data.size());
  data.resize((data.size() + 7) & ~std::size_t{7});
  int objects = in.u8() % 5;
  auto damage = static_cast<Damage>(in.u8() % static_cast<std::uint8_t>(Damage::kCount));
  std::vector<binder_size_t> offsets;
  for (int i = 0; i < objects; i++) object(in, data, offsets);
  switch (damage) {
    case Damage::kMisaligned:
      if (!offsets.empty()) offsets[0] += 1 + in.u8() % 7;
      break;
    case Damage::kPastEnd:
      offsets.push_back(data.size() + 8 * (in.u8() % 4));
      break;
    case Damage::kDescending:
      std::reverse(offsets.begin(), offsets.end());
      break;
    default:
      break;
  }
  tr.data_size = data.size();
  tr.offsets_size = offsets.size() * sizeof(binder_size_t);
  tr.data.ptr.buffer = memory_.place(data.data(), data.size());
  tr.data.ptr.offsets = memory_.place(offsets.data(), tr.offsets_size);
  if (damage == Damage::kOddOffsetsSize)
    tr.offsets_size = tr.offsets_size ? tr.offsets_size - 4 : 4;
  if (damage == Damage::kBadDataPointer) tr.data.ptr.buffer = kBogusAddress;
  if (damage == Damage::kHugeSizes) tr.data_size = ~binder_size_t{0} - 7;
  bool reply = mode & kTxnReply, sg = mode & kTxnSg;
  if (sg) {
    binder_transaction_data_sg tr_sg{tr, 8 * binder_size_t{in.u8()}};
    put(out, reply ? BC_REPLY_SG : BC_TRANSACTION_SG);
    return put(out, tr_sg);
  }
  put(out, reply ? BC_REPLY : BC_TRANSACTION);
  put(out, tr);
}

}  // namespace cused::fuzz

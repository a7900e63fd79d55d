// SPDX-License-Identifier: GPL-2.0-only
// libcused-client's Parcel: the data + offsets pair of one binder transaction, in libbinder's
// (Android 10) layout, so that a cused tool and an unmodified libbinder process read each other:
//   int32 / int64     little-endian, each value padded to 4 bytes;
//   String16          int32 length in char16 units (-1 for null), the UTF-16 chars, a NUL char16,
//                     padded to 4;
//   byte array        int32 length (-1 for null), the bytes, padded to 4;
//   binder objects    a flat_binder_object in the data, its offset in the offsets array;
//   interface token   int32 strict-mode policy, int32 work-source uid, String16 interface name.
// A Parcel that came out of the driver (BR_TRANSACTION / BR_REPLY) reads the mapped buffer in
// place and gives it back (BC_FREE_BUFFER) when it is destroyed or reset, as libbinder does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uapi/binder.h"

namespace cused::client {

// Android 10's StrictMode PENALTY_GATHER bit (0x40 << 16), always set in the policy word.
inline constexpr std::int32_t kStrictModePenaltyGather = 0x40 << 16;
// IPCThreadState::kUnsetWorkSource: no work-source uid is propagated.
inline constexpr std::int32_t kUnsetWorkSource = -1;
// Flags on a flattened object, as Android 10's servicemanager writes them: scheduling priority
// field 0x7f and "the receiver may send file descriptors back".
inline constexpr std::uint32_t kDefaultObjectFlags = 0x7f | FLAT_BINDER_FLAG_ACCEPTS_FDS;
// The defaults plus FLAT_BINDER_FLAG_INHERIT_RT, as libbinder's BBinder::setInheritRt(true) asks:
// on the Android common kernel's binder (cused's priority=android) the thread serving the object
// takes a real-time caller's policy instead of SCHED_NORMAL nice 0. Mainline ignores the bit.
inline constexpr std::uint32_t kInheritRtObjectFlags =
    kDefaultObjectFlags | uapi::FLAT_BINDER_FLAG_INHERIT_RT;

std::u16string utf8_to_utf16(std::string_view text);
std::string utf16_to_utf8(std::u16string_view text);

class Parcel {
 public:
  // Gives a driver buffer back; called with the buffer's user address.
  using BufferRelease = std::function<void(binder_uintptr_t)>;

  Parcel() = default;
  ~Parcel();
  Parcel(Parcel&& other) noexcept;
  Parcel& operator=(Parcel&& other) noexcept;
  Parcel(const Parcel&) = delete;
  Parcel& operator=(const Parcel&) = delete;

  // Reads `data`/`offsets` in place (a transaction buffer in the binder mapping); `release` runs
  // once, when this Parcel is destroyed or reset.
  static Parcel adopt(std::span<const std::byte> data, std::span<const binder_size_t> offsets,
                      BufferRelease release);

  // Drops the contents (giving back an adopted buffer) and starts an empty, writable Parcel.
  void reset();

  // ---- writing (appends at the end) ----
  void write_int32(std::int32_t value);
  void write_uint32(std::uint32_t value) { write_int32(static_cast<std::int32_t>(value)); }
  void write_int64(std::int64_t value);
  void write_string16(std::u16string_view text);
  void write_string16(std::string_view utf8) { write_string16(utf8_to_utf16(utf8)); }
  void write_null_string16() { write_int32(-1); }
  void write_byte_array(std::span<const std::byte> bytes);
  // A local object (BINDER_TYPE_BINDER): `binder` and `cookie` come back in BR_TRANSACTION.
  // `flags` are the flat_binder_object's; the driver gives them to the node it creates the first
  // time the object is sent (BinderProcess::object_flags keeps each object's).
  void write_strong_binder(binder_uintptr_t binder, binder_uintptr_t cookie,
                           std::uint32_t flags = kDefaultObjectFlags);
  // A reference this process holds (BINDER_TYPE_HANDLE).
  void write_strong_handle(std::uint32_t handle);
  void write_interface_token(std::u16string_view interface,
                             std::int32_t strict_policy = kStrictModePenaltyGather,
                             std::int32_t work_source = kUnsetWorkSource);
  // `count` zero bytes, padded to 4 (a benchmark payload).
  void write_zeros(std::size_t count);

  // ---- reading (from the read position; std::nullopt when the data runs out) ----
  std::optional<std::int32_t> read_int32() const;
  std::optional<std::uint32_t> read_uint32() const;
  std::optional<std::int64_t> read_int64() const;
  // Null strings read as std::nullopt too; `read_null` tells them apart when it matters.
  std::optional<std::u16string> read_string16() const;
  std::optional<std::vector<std::byte>> read_byte_array() const;
  // The flat_binder_object at the read position, if the offsets array names that position.
  std::optional<flat_binder_object> read_object() const;
  // The interface token's name, when the header is complete; policy and work source skipped.
  std::optional<std::u16string> read_interface_token() const;
  bool enforce_interface(std::u16string_view interface) const;

  std::size_t read_position() const { return read_pos_; }
  void set_read_position(std::size_t position) const { read_pos_ = position; }

  // ---- the transaction's view ----
  std::span<const std::byte> data() const { return view_; }
  std::span<const binder_size_t> offsets() const { return offsets_view_; }
  std::size_t size() const { return view_.size(); }

 private:
  std::byte* grow(std::size_t padded);
  const std::byte* take(std::size_t padded) const;
  void sync_views();

  std::vector<std::byte> data_;
  std::vector<binder_size_t> offsets_;
  std::span<const std::byte> view_;
  std::span<const binder_size_t> offsets_view_;
  BufferRelease release_;
  binder_uintptr_t adopted_ = 0;
  mutable std::size_t read_pos_ = 0;
};

}  // namespace cused::client

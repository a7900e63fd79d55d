// SPDX-License-Identifier: GPL-2.0-only
#include "client/parcel.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace cused::client {

namespace {

constexpr std::size_t pad4(std::size_t size) { return (size + 3) & ~std::size_t{3}; }

// Appends `code` (one Unicode scalar value) as UTF-8.
void append_utf8(std::string& out, char32_t code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xc0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xe0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code & 0x3f));
  }
}

void append_utf16(std::u16string& out, char32_t code) {
  if (code < 0x10000) {
    out += static_cast<char16_t>(code);
    return;
  }
  code -= 0x10000;
  out += static_cast<char16_t>(0xd800 | (code >> 10));
  out += static_cast<char16_t>(0xdc00 | (code & 0x3ff));
}

}  // namespace

// Malformed UTF-8 bytes become U+FFFD, as libutils' conversion does not reject them either.
std::u16string utf8_to_utf16(std::string_view text) {
  std::u16string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    auto lead = static_cast<unsigned char>(text[i]);
    std::size_t length = lead < 0x80           ? 1
                         : (lead >> 5) == 0x6  ? 2
                         : (lead >> 4) == 0xe  ? 3
                         : (lead >> 3) == 0x1e ? 4
                                               : 0;
    if (length == 0 || i + length > text.size()) {
      out += u'\ufffd';
      ++i;
      continue;
    }
    char32_t code = length == 1 ? lead : lead & (0x7f >> length);
    bool valid = true;
    for (std::size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      valid = valid && (next & 0xc0) == 0x80;
      code = (code << 6) | (next & 0x3f);
    }
    append_utf16(out, valid ? code : U'\ufffd');
    i += valid ? length : 1;
  }
  return out;
}

std::string utf16_to_utf8(std::u16string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char32_t code = text[i];
    bool high = code >= 0xd800 && code < 0xdc00;
    if (high && i + 1 < text.size() && text[i + 1] >= 0xdc00 && text[i + 1] < 0xe000) {
      code = 0x10000 + ((code - 0xd800) << 10) + (text[++i] - 0xdc00);
    } else if (code >= 0xd800 && code < 0xe000) {
      code = U'\ufffd';  // a lone surrogate
    }
    append_utf8(out, code);
  }
  return out;
}

Parcel::~Parcel() { reset(); }

Parcel::Parcel(Parcel&& other) noexcept { *this = std::move(other); }

Parcel& Parcel::operator=(Parcel&& other) noexcept {
  if (this == &other) return *this;
  reset();
  data_ = std::move(other.data_);
  offsets_ = std::move(other.offsets_);
  release_ = std::move(other.release_);
  adopted_ = std::exchange(other.adopted_, 0);
  read_pos_ = std::exchange(other.read_pos_, 0);
  if (release_) {
    view_ = other.view_;
    offsets_view_ = other.offsets_view_;
  } else {
    sync_views();
  }
  other.release_ = nullptr;
  other.data_.clear();
  other.offsets_.clear();
  other.sync_views();
  return *this;
}

Parcel Parcel::adopt(std::span<const std::byte> data, std::span<const binder_size_t> offsets,
                     BufferRelease release) {
  Parcel parcel;
  parcel.view_ = data;
  parcel.offsets_view_ = offsets;
  parcel.adopted_ = reinterpret_cast<binder_uintptr_t>(data.data());
  parcel.release_ = std::move(release);
  return parcel;
}

void Parcel::reset() {
  if (release_) std::exchange(release_, nullptr)(adopted_);
  adopted_ = 0;
  data_.clear();
  offsets_.clear();
  read_pos_ = 0;
  sync_views();
}

void Parcel::sync_views() {
  view_ = {data_.data(), data_.size()};
  offsets_view_ = {offsets_.data(), offsets_.size()};
}

// Returns room for `padded` more bytes at the end, zeroed (so padding is always zero). An
// adopted buffer is copied first: the driver's buffer is read-only.
std::byte* Parcel::grow(std::size_t padded) {
  if (release_) {
    std::vector<std::byte> data(view_.begin(), view_.end());
    std::vector<binder_size_t> offsets(offsets_view_.begin(), offsets_view_.end());
    std::size_t position = read_pos_;
    reset();
    data_ = std::move(data);
    offsets_ = std::move(offsets);
    read_pos_ = position;
  }
  std::size_t old_size = data_.size();
  data_.resize(old_size + padded);
  sync_views();
  return data_.data() + old_size;
}

void Parcel::write_int32(std::int32_t value) { std::memcpy(grow(4), &value, 4); }

void Parcel::write_int64(std::int64_t value) { std::memcpy(grow(8), &value, 8); }

void Parcel::write_string16(std::u16string_view text) {
  write_int32(static_cast<std::int32_t>(text.size()));
  std::size_t bytes = (text.size() + 1) * sizeof(char16_t);
  std::byte* out = grow(pad4(bytes));  // zeroed: the NUL and the padding
  // memcpy from an empty view's null data() is undefined even for 0 bytes (UBSan).
  if (!text.empty()) std::memcpy(out, text.data(), text.size() * sizeof(char16_t));
}

void Parcel::write_byte_array(std::span<const std::byte> bytes) {
  write_int32(static_cast<std::int32_t>(bytes.size()));
  if (!bytes.empty()) std::memcpy(grow(pad4(bytes.size())), bytes.data(), bytes.size());
}

void Parcel::write_zeros(std::size_t count) { grow(pad4(count)); }

void Parcel::write_strong_binder(binder_uintptr_t binder, binder_uintptr_t cookie,
                                 std::uint32_t flags) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_BINDER;
  object.flags = flags;
  object.binder = binder;
  object.cookie = cookie;
  std::size_t offset = data_.size();
  std::memcpy(grow(sizeof object), &object, sizeof object);
  offsets_.push_back(offset);
  sync_views();
}

void Parcel::write_strong_handle(std::uint32_t handle) {
  flat_binder_object object{};
  object.hdr.type = BINDER_TYPE_HANDLE;
  object.flags = kDefaultObjectFlags;
  object.handle = handle;
  std::size_t offset = data_.size();
  std::memcpy(grow(sizeof object), &object, sizeof object);
  offsets_.push_back(offset);
  sync_views();
}

void Parcel::write_interface_token(std::u16string_view interface, std::int32_t strict_policy,
                                   std::int32_t work_source) {
  write_int32(strict_policy | kStrictModePenaltyGather);
  write_int32(work_source);
  write_string16(interface);
}

const std::byte* Parcel::take(std::size_t padded) const {
  if (read_pos_ > view_.size() || view_.size() - read_pos_ < padded) return nullptr;
  const std::byte* at = view_.data() + read_pos_;
  read_pos_ += padded;
  return at;
}

std::optional<std::int32_t> Parcel::read_int32() const {
  const std::byte* at = take(4);
  if (!at) return std::nullopt;
  std::int32_t value;
  std::memcpy(&value, at, 4);
  return value;
}

std::optional<std::uint32_t> Parcel::read_uint32() const {
  auto value = read_int32();
  if (!value) return std::nullopt;
  return static_cast<std::uint32_t>(*value);
}

std::optional<std::int64_t> Parcel::read_int64() const {
  const std::byte* at = take(8);
  if (!at) return std::nullopt;
  std::int64_t value;
  std::memcpy(&value, at, 8);
  return value;
}

std::optional<std::u16string> Parcel::read_string16() const {
  std::size_t start = read_pos_;
  auto length = read_int32();
  if (!length || *length < 0) return std::nullopt;
  std::size_t bytes = (static_cast<std::size_t>(*length) + 1) * sizeof(char16_t);
  const std::byte* at = take(pad4(bytes));
  // libbinder also insists on the terminating NUL. Checked before allocating anything: the
  // length word comes from the peer.
  char16_t terminator = u'x';
  if (at) std::memcpy(&terminator, at + bytes - sizeof(char16_t), sizeof terminator);
  if (!at || terminator != u'\0') {
    read_pos_ = start;
    return std::nullopt;
  }
  std::u16string text(static_cast<std::size_t>(*length), u'\0');
  std::memcpy(text.data(), at, text.size() * sizeof(char16_t));
  return text;
}

std::optional<std::vector<std::byte>> Parcel::read_byte_array() const {
  std::size_t start = read_pos_;
  auto length = read_int32();
  if (!length || *length < 0) return std::nullopt;
  const std::byte* at = take(pad4(static_cast<std::size_t>(*length)));
  if (!at) {
    read_pos_ = start;
    return std::nullopt;
  }
  return std::vector<std::byte>(at, at + *length);
}

std::optional<flat_binder_object> Parcel::read_object() const {
  bool listed =
      std::find(offsets_view_.begin(), offsets_view_.end(), read_pos_) != offsets_view_.end();
  if (!listed) return std::nullopt;
  const std::byte* at = take(sizeof(flat_binder_object));
  if (!at) return std::nullopt;
  flat_binder_object object;
  std::memcpy(&object, at, sizeof object);
  return object;
}

std::optional<std::u16string> Parcel::read_interface_token() const {
  if (!read_int32() || !read_int32()) return std::nullopt;
  return read_string16();
}

bool Parcel::enforce_interface(std::u16string_view interface) const {
  auto name = read_interface_token();
  return name && *name == interface;
}

}  // namespace cused::client

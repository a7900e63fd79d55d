// SPDX-License-Identifier: GPL-2.0-only
// libcused-client's Parcel against libbinder's (Android 10) wire layout: what an unmodified
// libbinder peer reads and writes. Byte-exact checks, since a layout slip is what a peer notices.
#include "client/parcel.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace cused::client {
namespace {

std::vector<std::uint8_t> bytes_of(const Parcel& parcel) {
  std::vector<std::uint8_t> out(parcel.size());
  std::memcpy(out.data(), parcel.data().data(), out.size());
  return out;
}

TEST(Parcel, Int32AndInt64RoundTrip_LittleEndian) {
  Parcel parcel;
  parcel.write_int32(-2);
  parcel.write_int64(0x0102030405060708);
  parcel.write_uint32(0xfffffff0u);
  EXPECT_EQ(bytes_of(parcel), (std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xff, 8, 7, 6, 5, 4, 3,
                                                         2, 1, 0xf0, 0xff, 0xff, 0xff}));
  EXPECT_EQ(parcel.read_int32(), -2);
  EXPECT_EQ(parcel.read_int64(), 0x0102030405060708);
  EXPECT_EQ(parcel.read_uint32(), 0xfffffff0u);
  EXPECT_EQ(parcel.read_int32(), std::nullopt);  // past the end
}

// String16: int32 length in char16 units, the chars, a NUL char16, zero padding to 4.
TEST(Parcel, String16LayoutMatchesLibbinder) {
  Parcel odd;
  odd.write_string16(std::string_view("abc"));  // 3 chars + NUL = 8 bytes, no padding
  EXPECT_EQ(bytes_of(odd), (std::vector<std::uint8_t>{3, 0, 0, 0, 'a', 0, 'b', 0, 'c', 0, 0, 0}));
  Parcel even;
  even.write_string16(std::string_view("ab"));  // 2 chars + NUL = 6 bytes, padded to 8
  EXPECT_EQ(bytes_of(even), (std::vector<std::uint8_t>{2, 0, 0, 0, 'a', 0, 'b', 0, 0, 0, 0, 0}));
  Parcel empty;
  empty.write_string16(std::u16string_view());
  EXPECT_EQ(bytes_of(empty), (std::vector<std::uint8_t>{0, 0, 0, 0, 0, 0, 0, 0}));
  Parcel null;
  null.write_null_string16();
  EXPECT_EQ(bytes_of(null), (std::vector<std::uint8_t>{0xff, 0xff, 0xff, 0xff}));
  EXPECT_EQ(null.read_string16(), std::nullopt);
}

TEST(Parcel, String16RoundTrip_NonAsciiAndSurrogates) {
  const std::string text = "caf\xc3\xa9 \xf0\x9f\x98\x80";  // "café 😀"
  Parcel parcel;
  parcel.write_string16(std::string_view(text));
  parcel.write_int32(7);
  auto read = parcel.read_string16();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->size(), 7u);  // c a f é space + a surrogate pair
  EXPECT_EQ(utf16_to_utf8(*read), text);
  EXPECT_EQ(parcel.read_int32(), 7);  // the padding was skipped exactly
}

TEST(Parcel, TruncatedOrUnterminatedString16IsRejectedWithoutMoving) {
  Parcel parcel;
  parcel.write_int32(100);  // claims 100 chars, has none
  EXPECT_EQ(parcel.read_string16(), std::nullopt);
  EXPECT_EQ(parcel.read_position(), 0u);
  Parcel huge;  // a hostile length must be refused, not allocated
  huge.write_int32(INT32_MAX);
  EXPECT_EQ(huge.read_string16(), std::nullopt);
  Parcel huge_array;
  huge_array.write_int32(INT32_MAX);
  EXPECT_EQ(huge_array.read_byte_array(), std::nullopt);
  Parcel unterminated;
  unterminated.write_int32(1);
  unterminated.write_int32(0x00620061);  // 'a','b': no NUL where it must be
  EXPECT_EQ(unterminated.read_string16(), std::nullopt);
}

TEST(Parcel, ByteArrayIsLengthThenPaddedBytes) {
  const std::vector<std::byte> payload{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                       std::byte{5}};
  Parcel parcel;
  parcel.write_byte_array(payload);
  parcel.write_int32(9);
  EXPECT_EQ(bytes_of(parcel),
            (std::vector<std::uint8_t>{5, 0, 0, 0, 1, 2, 3, 4, 5, 0, 0, 0, 9, 0, 0, 0}));
  EXPECT_EQ(parcel.read_byte_array(), payload);
  EXPECT_EQ(parcel.read_int32(), 9);
}

// Android 10 header: strict-mode policy (PENALTY_GATHER set), work source -1, interface name.
TEST(Parcel, InterfaceTokenIsAndroid10Header) {
  Parcel parcel;
  parcel.write_interface_token(u"a.I");
  EXPECT_EQ(bytes_of(parcel),
            (std::vector<std::uint8_t>{0, 0, 0x40, 0, 0xff, 0xff, 0xff, 0xff, 3, 0,
                                       0, 0, 'a',  0, '.',  0,    'I',  0,    0, 0}));
  EXPECT_TRUE(parcel.enforce_interface(u"a.I"));
  parcel.set_read_position(0);
  EXPECT_FALSE(parcel.enforce_interface(u"a.J"));
}

TEST(Parcel, StrongBinderAndHandleAreFlatObjectsListedInOffsets) {
  Parcel parcel;
  parcel.write_int32(1);
  parcel.write_strong_binder(0x1000, 0x2000);
  parcel.write_strong_handle(7);
  ASSERT_EQ(parcel.offsets().size(), 2u);
  EXPECT_EQ(parcel.offsets()[0], 4u);
  EXPECT_EQ(parcel.offsets()[1], 4u + sizeof(flat_binder_object));
  EXPECT_EQ(parcel.size(), 4u + 2 * sizeof(flat_binder_object));
  EXPECT_EQ(parcel.read_object(), std::nullopt);  // offset 0 is not an object
  parcel.set_read_position(4);
  auto binder = parcel.read_object();
  ASSERT_TRUE(binder);
  EXPECT_EQ(binder->hdr.type, BINDER_TYPE_BINDER);
  EXPECT_EQ(binder->binder, 0x1000u);
  EXPECT_EQ(binder->cookie, 0x2000u);
  EXPECT_EQ(binder->flags, kDefaultObjectFlags);
  auto handle = parcel.read_object();
  ASSERT_TRUE(handle);
  EXPECT_EQ(handle->hdr.type, BINDER_TYPE_HANDLE);
  EXPECT_EQ(handle->handle, 7u);
}

// S4.12 under priority=android: a local object written with kInheritRtObjectFlags carries
// FLAT_BINDER_FLAG_INHERIT_RT beside the defaults (binder-throughput --inherit-rt).
TEST(Parcel, S4_12_StrongBinderCarriesTheObjectsInheritRtFlag) {
  Parcel parcel;
  parcel.write_strong_binder(0x1000, 0x1000, kInheritRtObjectFlags);
  auto binder = parcel.read_object();
  ASSERT_TRUE(binder);
  EXPECT_EQ(binder->flags, kDefaultObjectFlags | uapi::FLAT_BINDER_FLAG_INHERIT_RT);
}

TEST(Parcel, ZerosArePaddedToFour) {
  Parcel parcel;
  parcel.write_zeros(5);
  EXPECT_EQ(parcel.size(), 8u);
}

// A driver buffer is read in place and given back exactly once, at reset or destruction, and
// also when the Parcel was moved first.
TEST(Parcel, AdoptedBufferIsReleasedOnceAfterMoves) {
  std::vector<std::int32_t> buffer{42, 43};
  std::vector<binder_uintptr_t> released;
  {
    Parcel adopted =
        Parcel::adopt({reinterpret_cast<const std::byte*>(buffer.data()), 8}, {},
                      [&released](binder_uintptr_t address) { released.push_back(address); });
    EXPECT_EQ(adopted.read_int32(), 42);
    Parcel moved = std::move(adopted);
    EXPECT_EQ(moved.read_int32(), 43);
    EXPECT_TRUE(released.empty());
  }
  ASSERT_EQ(released.size(), 1u);
  EXPECT_EQ(released[0], reinterpret_cast<binder_uintptr_t>(buffer.data()));
}

TEST(Parcel, WritingToAdoptedBufferCopiesAndReleases) {
  std::int32_t word = 5;
  int releases = 0;
  Parcel parcel = Parcel::adopt({reinterpret_cast<const std::byte*>(&word), 4}, {},
                                [&releases](binder_uintptr_t) { ++releases; });
  parcel.write_int32(6);
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(word, 5);  // the read-only buffer was not touched
  EXPECT_EQ(parcel.read_int32(), 5);
  EXPECT_EQ(parcel.read_int32(), 6);
}

}  // namespace
}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
// The daemon's buffer store (core/buffer_file.h): a memfd the client maps (FUSE passthrough and
// the CUSE shim hand the client this file) and the daemon maps too; a punched hole frees the
// page in both mappings.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/buffer_file.h"

namespace cused::host {

class MemfdBufferFile final : public core::BufferFile {
 public:
  // A memfd of `size` bytes (no pages yet) and the daemon's shared mapping of it.
  // Throws std::system_error when the kernel refuses.
  static std::unique_ptr<MemfdBufferFile> create(const std::string& name, std::size_t size);
  ~MemfdBufferFile() override;

  int punch_hole(std::size_t offset, std::size_t len) override;
  // MADV_POPULATE_WRITE on the daemon's mapping; on kernels before 5.14, which lack it, an atomic
  // or-with-zero write-faults each page with the same guarantee (an atomic read-modify-write
  // stores the value it read).
  int populate(std::size_t offset, std::size_t len) override;
  // SEEK_DATA on the memfd.
  bool page_resident(std::size_t offset) const override;
  // mincore on the daemon's mapping, which for a shared memfd mapping reports the file's pages.
  long resident_pages(std::size_t offset, std::size_t len) const override;

 private:
  MemfdBufferFile(int fd, std::byte* data, std::size_t size, std::size_t page_size)
      : BufferFile(fd, data, size, page_size) {}
};

}  // namespace cused::host

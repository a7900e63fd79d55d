// SPDX-License-Identifier: GPL-2.0-only
// The page store behind one proc's buffer space: a memfd that the client maps (FUSE passthrough
// makes the client's mmap of the device node map this file) and that the daemon maps too, so a
// transaction is copied exactly once, from the sender's memory into the target's buffer. Punching
// a hole frees the page in both mappings (the shrinker's reclaim, docs/design.md section 4).
// core sees the store through this class; the daemon's memfd is cused/host/memfd_buffer_file.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cused::core {

class BufferFile {
 public:
  virtual ~BufferFile() = default;
  BufferFile(const BufferFile&) = delete;
  BufferFile& operator=(const BufferFile&) = delete;

  // The file the client maps (-1 for a store no client maps), and the daemon's mapping of it.
  int fd() const { return fd_; }
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  // The OS's page: the unit of punch_hole, populate and residency, which the allocator's page
  // table counts in. The host knows it (sysconf); core takes it from here.
  std::size_t page_size() const { return page_size_; }

  // Makes [offset, offset + len) of the daemon's mapping resident without changing a byte of it:
  // a hole gets a fresh zero page, a resident page is left alone. Two installers of one page, or
  // an installer and a writer of a neighbouring buffer on the same page, can therefore never
  // clobber each other's data. `offset` and `len` are whole pages. Returns 0 or -errno (ENOMEM:
  // the store got no memory, e.g. at its memory cgroup's limit).
  virtual int populate(std::size_t offset, std::size_t len) = 0;

  // Returns [offset, offset + len) to the OS: the pages read as zero and are no longer
  // resident. Returns 0 or -errno.
  virtual int punch_hole(std::size_t offset, std::size_t len) = 0;
  // Whether the page at `offset` is resident; for tests and stats.
  virtual bool page_resident(std::size_t offset) const = 0;
  // How many pages of [offset, offset + len) are resident, whether or not the daemon's mapping
  // has touched them. For tests and stats; -errno on failure.
  virtual long resident_pages(std::size_t offset, std::size_t len) const = 0;

 protected:
  BufferFile(int fd, std::byte* data, std::size_t size, std::size_t page_size)
      : fd_(fd), data_(data), size_(size), page_size_(page_size) {}

 private:
  const int fd_;
  std::byte* const data_;
  const std::size_t size_;
  const std::size_t page_size_;
};

}  // namespace cused::core

// The page store behind one proc's buffer space: a memfd that the client maps (FUSE passthrough
// makes the client's mmap of the device node map this file) and that the daemon maps too, so a
// transaction is copied exactly once, from the sender's memory into the target's buffer. Punching
// a hole frees the page in both mappings (the shrinker's reclaim, docs/design.md section 4).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cused::core {

class BufferFile {
 public:
  // A memfd of `size` bytes (no pages yet) and the daemon's shared mapping of it.
  // Throws std::system_error when the kernel refuses.
  static std::unique_ptr<BufferFile> create(const std::string& name, std::size_t size);
  ~BufferFile();
  BufferFile(const BufferFile&) = delete;
  BufferFile& operator=(const BufferFile&) = delete;

  int fd() const { return fd_; }
  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

  // Returns [offset, offset + len) to the kernel: the pages read as zero and are no longer
  // resident. Returns 0 or -errno.
  int punch_hole(std::size_t offset, std::size_t len);
  // Whether the page at `offset` is resident (SEEK_DATA on the memfd); for tests and stats.
  bool page_resident(std::size_t offset) const;
  // How many pages of [offset, offset + len) are resident in the memfd's page cache (mincore on
  // the daemon's mapping, which for a shared memfd mapping reports the file's pages whether or
  // not this mapping has touched them). For tests and stats; -errno on failure.
  long resident_pages(std::size_t offset, std::size_t len) const;

 private:
  BufferFile(int fd, std::byte* data, std::size_t size) : fd_(fd), data_(data), size_(size) {}
  int fd_;
  std::byte* data_;
  std::size_t size_;
};

}  // namespace cused::core

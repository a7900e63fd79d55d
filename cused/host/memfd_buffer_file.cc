// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/memfd_buffer_file.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <system_error>
#include <vector>

namespace cused::host {

std::unique_ptr<MemfdBufferFile> MemfdBufferFile::create(const std::string& name,
                                                         std::size_t size) {
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "memfd_create");
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    close(fd);
    throw std::system_error(err, std::generic_category(), "ftruncate memfd");
  }
  void* map = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    int err = errno;
    close(fd);
    throw std::system_error(err, std::generic_category(), "mmap memfd");
  }
  return std::unique_ptr<MemfdBufferFile>(new MemfdBufferFile(
      fd, static_cast<std::byte*>(map), size, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))));
}

MemfdBufferFile::~MemfdBufferFile() {
  munmap(data(), size());
  close(fd());
}

int MemfdBufferFile::punch_hole(std::size_t offset, std::size_t len) {
  if (fallocate(fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                static_cast<off_t>(len)) != 0)
    return -errno;
  return 0;
}

int MemfdBufferFile::populate(std::size_t offset, std::size_t len) {
  std::byte* start = data() + offset;
  static std::atomic<bool> have_populate_write{true};
  if (have_populate_write.load(std::memory_order_relaxed)) {
    if (madvise(start, len, MADV_POPULATE_WRITE) == 0) return 0;
    if (errno != EINVAL) return -errno;
    have_populate_write.store(false, std::memory_order_relaxed);
  }
  for (std::size_t off = 0; off < len; off += page_size())
    __atomic_fetch_or(reinterpret_cast<unsigned char*>(start + off), 0, __ATOMIC_RELAXED);
  return 0;
}

bool MemfdBufferFile::page_resident(std::size_t offset) const {
  off_t data = lseek(fd(), static_cast<off_t>(offset), SEEK_DATA);
  return data == static_cast<off_t>(offset);
}

long MemfdBufferFile::resident_pages(std::size_t offset, std::size_t len) const {
  const std::size_t page = page_size();
  if (offset % page != 0 || offset > size() || len > size() - offset) return -EINVAL;
  std::vector<unsigned char> residency((len + page - 1) / page);
  if (mincore(data() + offset, len, residency.data()) != 0) return -errno;
  long resident = 0;
  for (unsigned char flags : residency) resident += flags & 1;
  return resident;
}

}  // namespace cused::host

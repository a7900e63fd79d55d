// SPDX-License-Identifier: GPL-2.0-only
// Where the client mapped its buffer space. The daemon is not told about mmap (FUSE passthrough
// maps the memfd without a request), so the frontend finds the mapping in /proc/<pid>/maps when
// core first needs it; until then the proc counts as unmapped (S1.7).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace cused::core {

struct ClientMapping {
  std::uint64_t start = 0;  // vm_start: what BR_TRANSACTION buffer pointers are relative to
  std::size_t length = 0;   // the vma length; core uses min(length, 4 MiB) (S1.4)
  bool writable = false;    // S1.4: the kernel refuses PROT_WRITE; cused treats it as unmapped
};

class MappingFinder {
 public:
  virtual ~MappingFinder() = default;
  virtual std::optional<ClientMapping> find() = 0;
};

}  // namespace cused::core

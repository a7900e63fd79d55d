// SPDX-License-Identifier: GPL-2.0-only
// What a program's own memory calls cost, run plain and under `cused run`, whose seccomp filter
// notifies the daemon of munmap and mremap, of mmaps of a file with PROT_WRITE and of mprotects
// that add PROT_WRITE (binder's mapping rules, cused/run/vma_rules.h; docs/run.md). Everything
// else is decided by the filter in the kernel. Run it under two daemons' `cused run` to compare
// their filters (docs/performance.md, "Writable mappings under cused run").
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>

namespace {

constexpr std::size_t kLength = 64 * 1024;

// A temporary file of kLength bytes, gone when the benchmark ends.
class TemporaryFile {
 public:
  TemporaryFile() {
    char path[] = "/tmp/memory-calls-XXXXXX";
    fd_ = mkstemp(path);
    if (fd_ < 0 || unlink(path) != 0 || ftruncate(fd_, kLength) != 0) std::abort();
  }
  ~TemporaryFile() { close(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_;
};

void map_and_unmap(benchmark::State& state, int prot, int flags, int fd) {
  for (auto _ : state) {
    void* addr = mmap(nullptr, kLength, prot, flags, fd, 0);
    if (addr == MAP_FAILED) {
      state.SkipWithError("mmap failed");
      return;
    }
    benchmark::DoNotOptimize(addr);
    munmap(addr, kLength);
  }
}

// Notified twice under cused run: the mmap (writable, of a file) and the munmap.
void BM_WritableFileMmapMunmap(benchmark::State& state) {
  TemporaryFile file;
  map_and_unmap(state, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd());
}
BENCHMARK(BM_WritableFileMmapMunmap);

// Notified once: the munmap.
void BM_ReadOnlyFileMmapMunmap(benchmark::State& state) {
  TemporaryFile file;
  map_and_unmap(state, PROT_READ, MAP_SHARED, file.fd());
}
BENCHMARK(BM_ReadOnlyFileMmapMunmap);

// Notified once: the munmap.
void BM_AnonymousMmapMunmap(benchmark::State& state) {
  map_and_unmap(state, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
}
BENCHMARK(BM_AnonymousMmapMunmap);

// Adding PROT_WRITE is notified, taking it away is not: one of the two calls per iteration.
void BM_MprotectWriteThenRead(benchmark::State& state) {
  void* addr = mmap(nullptr, kLength, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) std::abort();
  for (auto _ : state) {
    mprotect(addr, kLength, PROT_READ | PROT_WRITE);
    mprotect(addr, kLength, PROT_READ);
  }
  munmap(addr, kLength);
}
BENCHMARK(BM_MprotectWriteThenRead);

// Never notified.
void BM_MprotectNoneThenRead(benchmark::State& state) {
  void* addr = mmap(nullptr, kLength, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) std::abort();
  for (auto _ : state) {
    mprotect(addr, kLength, PROT_NONE);
    mprotect(addr, kLength, PROT_READ);
  }
  munmap(addr, kLength);
}
BENCHMARK(BM_MprotectNoneThenRead);

}  // namespace

BENCHMARK_MAIN();

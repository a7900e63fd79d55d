// SPDX-License-Identifier: GPL-2.0-only
// A process's file table, faked for the in-process drivers of core (the unit harness in
// tests/unit/core and the fuzz runner in tests/fuzz): core::CallerFiles over a map from fd numbers
// to fake open files, so that fd passing (S5.3-S5.8) runs without a frontend. Every PassedFile a
// table hands out is counted in a counter the tables of one test share, so the test can check
// that core dropped each exactly once.
#pragma once

#include <atomic>
#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/passed_files.h"

namespace cused::testing {

// An open file description: what an fd names, shared by every fd (in any table) naming it.
struct FakeFile {
  std::string name;
};

// The PassedFile objects alive, over every table sharing the counter.
using PassedFileCount = std::shared_ptr<std::atomic<long>>;
inline PassedFileCount new_passed_file_count() { return std::make_shared<std::atomic<long>>(0); }

// The file a table's take() held for the driver (fget).
class FakePassedFile final : public core::PassedFile {
 public:
  FakePassedFile(std::shared_ptr<const FakeFile> file, PassedFileCount live)
      : file(std::move(file)), live_(std::move(live)) {
    live_->fetch_add(1);
  }
  ~FakePassedFile() override { live_->fetch_sub(1); }
  FakePassedFile(const FakePassedFile&) = delete;
  FakePassedFile& operator=(const FakePassedFile&) = delete;

  const std::shared_ptr<const FakeFile> file;

 private:
  PassedFileCount live_;
};

class FakeFiles final : public core::CallerFiles {
 public:
  // `max_fds` plays RLIMIT_NOFILE: an fd of max_fds or above cannot be allocated (-EMFILE).
  explicit FakeFiles(PassedFileCount live, int max_fds = 1024)
      : live_(std::move(live)), max_fds_(max_fds) {}

  // A new open file named `name` at the lowest free fd: the fd, or -EMFILE.
  int open(const std::string& name) {
    std::lock_guard guard(lock_);
    return put_locked(std::make_shared<const FakeFile>(FakeFile{name}));
  }
  // The name of the file `fd` refers to, if it is open.
  std::optional<std::string> name_of(int fd) const {
    std::lock_guard guard(lock_);
    auto it = table_.find(fd);
    if (it == table_.end()) return std::nullopt;
    return it->second->name;
  }
  std::size_t open_count() const {
    std::lock_guard guard(lock_);
    return table_.size();
  }
  // The `n`th install from now (1: the next one) fails with `error`.
  void fail_install(int n, int error = -EMFILE) {
    std::lock_guard guard(lock_);
    installs_until_failure_ = n;
    install_error_ = error;
  }
  // close() answers `error` and closes nothing (-ENOSYS: a frontend that cannot close a
  // descriptor of another process).
  void refuse_close(int error = -ENOSYS) {
    std::lock_guard guard(lock_);
    close_error_ = error;
  }
  // Successful take() calls so far.
  int taken() const {
    std::lock_guard guard(lock_);
    return taken_;
  }
  // Every fd close() was asked to close, in order.
  std::vector<int> close_requests() const {
    std::lock_guard guard(lock_);
    return close_requests_;
  }

  std::unique_ptr<core::PassedFile> take(int fd, int& error) override {
    std::lock_guard guard(lock_);
    auto it = table_.find(fd);
    if (it == table_.end()) {
      error = -EBADF;
      return nullptr;
    }
    taken_++;
    return std::make_unique<FakePassedFile>(it->second, live_);
  }

  int install(const core::PassedFile& file) override {
    const auto* passed = dynamic_cast<const FakePassedFile*>(&file);
    if (!passed) return -EBADF;
    std::lock_guard guard(lock_);
    if (installs_until_failure_ > 0 && --installs_until_failure_ == 0) return install_error_;
    return put_locked(passed->file);
  }

  int close(int fd) override {
    std::lock_guard guard(lock_);
    close_requests_.push_back(fd);
    if (close_error_) return close_error_;
    return table_.erase(fd) ? 0 : -EBADF;
  }

 private:
  int put_locked(std::shared_ptr<const FakeFile> file) {
    int fd = 0;
    while (table_.contains(fd)) fd++;
    if (fd >= max_fds_) return -EMFILE;
    table_.emplace(fd, std::move(file));
    return fd;
  }

  mutable std::mutex lock_;
  PassedFileCount live_;
  const int max_fds_;
  std::map<int, std::shared_ptr<const FakeFile>> table_;
  int installs_until_failure_ = 0;
  int install_error_ = 0;
  int close_error_ = 0;
  int taken_ = 0;
  std::vector<int> close_requests_;
};

}  // namespace cused::testing

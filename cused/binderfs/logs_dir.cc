// SPDX-License-Identifier: GPL-2.0-only
#include "cused/binderfs/logs_dir.h"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>

#include "core/debug_print.h"
#include "core/proc.h"
#include "cused/fuse/request.h"
#include "cused/request/caller_scheduling.h"

namespace cused::binderfs {
namespace {

enum class LogFile { kState, kStats, kTransactions, kTransactionLog, kFailedTransactionLog };
constexpr std::array<std::string_view, 5> kFileNames{"state", "stats", "transactions",
                                                     "transaction_log", "failed_transaction_log"};
constexpr fuse_ino_t kFirstFileIno = 32;
// proc/<pid> is inode kFirstPidIno + pid: pids stay below 2^22, device inodes start higher.
constexpr fuse_ino_t kFirstPidIno = fuse_ino_t{1} << 24;
constexpr fuse_ino_t kLastPidIno = kFirstPidIno + (fuse_ino_t{1} << 22);

bool is_log_file(fuse_ino_t ino) {
  return ino >= kFirstFileIno && ino < kFirstFileIno + kFileNames.size();
}
bool is_pid_file(fuse_ino_t ino) { return ino >= kFirstPidIno && ino < kLastPidIno; }
pid_t pid_of(fuse_ino_t ino) { return static_cast<pid_t>(ino - kFirstPidIno); }

std::optional<pid_t> parse_pid(const std::string& name) {
  if (name.empty() || name.size() > 7 || name[0] == '0') return std::nullopt;
  pid_t pid = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  if (kFirstPidIno + static_cast<fuse_ino_t>(pid) >= kLastPidIno) return std::nullopt;
  return pid;
}

}  // namespace

LogsDir::LogsDir(std::shared_ptr<core::Driver> driver,
                 std::function<std::vector<std::shared_ptr<core::Device>>()> devices)
    : driver_(std::move(driver)), devices_(std::move(devices)) {}

bool LogsDir::owns(fuse_ino_t ino) {
  return ino == kDirIno || ino == kProcDirIno || is_log_file(ino) || is_pid_file(ino);
}

bool LogsDir::pid_has_proc(pid_t pid) const { return !driver_->procs_of(pid).empty(); }

std::optional<fuse_ino_t> LogsDir::lookup(fuse_ino_t parent, const std::string& name) const {
  if (parent == kDirIno) {
    if (name == "proc") return kProcDirIno;
    auto it = std::find(kFileNames.begin(), kFileNames.end(), name);
    if (it == kFileNames.end()) return std::nullopt;
    return kFirstFileIno + static_cast<fuse_ino_t>(it - kFileNames.begin());
  }
  if (parent != kProcDirIno) return std::nullopt;
  auto pid = parse_pid(name);
  if (!pid || !pid_has_proc(*pid)) return std::nullopt;
  return kFirstPidIno + static_cast<fuse_ino_t>(*pid);
}

bool LogsDir::fill_attr(fuse_ino_t ino, struct stat& st) const {
  st = {};
  st.st_ino = ino;
  if (ino == kDirIno || ino == kProcDirIno) {
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
    return true;
  }
  if (is_pid_file(ino) && !pid_has_proc(pid_of(ino))) return false;
  if (!is_log_file(ino) && !is_pid_file(ino)) return false;
  st.st_mode = S_IFREG | 0444;  // binderfs creates them 0444; size 0 as debugfs shows
  st.st_nlink = 1;
  return true;
}

std::optional<std::vector<LogsDir::DirEntry>> LogsDir::list(fuse_ino_t ino) const {
  std::vector<DirEntry> entries;
  if (ino == kDirIno) {
    for (std::size_t i = 0; i < kFileNames.size(); ++i)
      entries.push_back({std::string(kFileNames[i]), kFirstFileIno + i, S_IFREG});
    entries.push_back({"proc", kProcDirIno, S_IFDIR});
    return entries;
  }
  if (ino != kProcDirIno) return std::nullopt;
  std::vector<pid_t> pids;
  for (const auto& proc : driver_->procs()) pids.push_back(proc->pid());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());  // procs() is sorted by pid
  for (pid_t pid : pids)
    entries.push_back({std::to_string(pid), kFirstPidIno + static_cast<fuse_ino_t>(pid), S_IFREG});
  return entries;
}

std::optional<std::string> LogsDir::render(fuse_ino_t ino) const {
  if (is_pid_file(ino)) {
    std::string text = core::DebugPrint::proc(*driver_, pid_of(ino));
    if (text.empty()) return std::nullopt;
    return text;
  }
  switch (static_cast<LogFile>(ino - kFirstFileIno)) {
    case LogFile::kState:
      return core::DebugPrint::state(*driver_);
    case LogFile::kStats: {
      auto devices = devices_();
      std::string text = core::DebugPrint::stats(*driver_, devices);
      RequestFailures::global().print(text);  // cused's own lines (docs/binder_logs.md)
      text += fmt::format("cused requests served at their caller's scheduling: {}\n",
                          CallerScheduling::changes());
      text += fmt::format("cused spinlock sections run unpreemptible: {}\n",
                          CallerScheduling::unpreemptible_sections());
      return text;
    }
    case LogFile::kTransactions:
      return core::DebugPrint::transactions(*driver_);
    case LogFile::kTransactionLog:
      return driver_->transaction_log().print();
    case LogFile::kFailedTransactionLog:
      return driver_->failed_transaction_log().print();
  }
  return std::nullopt;
}

void LogsDir::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kDirIno || ino == kProcDirIno) return static_cast<void>(fuse::reply_err(req, EISDIR));
  if ((fi->flags & O_ACCMODE) != O_RDONLY) return static_cast<void>(fuse::reply_err(req, EACCES));
  auto text = render(ino);
  if (!text) return static_cast<void>(fuse::reply_err(req, ENOENT));
  auto snapshot = std::make_unique<std::string>(std::move(*text));
  fi->fh = reinterpret_cast<std::uint64_t>(snapshot.get());
  fi->direct_io = 1;  // size 0 in stat; reads must reach us, not a page cache
  fi->keep_cache = 0;
  {
    sync::LockGuard guard(lock_);
    snapshots_.emplace(snapshot.get(), std::move(snapshot));
  }
  fuse::reply_open(req, fi);
}

void LogsDir::read(fuse_req_t req, std::size_t size, off_t offset, fuse_file_info* fi) {
  sync::LockGuard guard(lock_);
  auto it = snapshots_.find(reinterpret_cast<const std::string*>(fi->fh));
  if (it == snapshots_.end()) return static_cast<void>(fuse::reply_err(req, EBADF));
  std::string_view text = *it->second;
  text = text.substr(std::min(text.size(), static_cast<std::size_t>(offset)), size);
  fuse::reply_buf(req, text.data(), text.size());
}

void LogsDir::release(fuse_req_t req, fuse_file_info* fi) {
  std::unique_ptr<std::string> snapshot;
  {
    sync::LockGuard guard(lock_);
    auto node = snapshots_.extract(reinterpret_cast<const std::string*>(fi->fh));
    if (!node.empty()) snapshot = std::move(node.mapped());
  }
  fuse::reply_err(req, 0);
}

}  // namespace cused::binderfs

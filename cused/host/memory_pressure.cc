// SPDX-License-Identifier: GPL-2.0-only
#include "cused/host/memory_pressure.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "cused/host/read_small_file.h"

namespace cused::host {

namespace {

class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The whole file, or "" (read_small_file: an ifstream may throw when a read fails).
std::string read_text(const std::string& path) {
  std::string text;
  read_small_file(path, text, 1 << 20);  // mountinfo of a host with many mounts is large
  return text;
}

std::string trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

class PsiTrigger final : public PressureSource {
 public:
  explicit PsiTrigger(int fd) : fd_(fd) {}
  std::string_view name() const override { return "psi"; }
  int fd() const override { return fd_.get(); }
  short events() const override { return POLLPRI; }
  // A PSI trigger fires once per window; nothing to re-arm. POLLERR means the trigger died.
  bool consume() override { return true; }

 private:
  UniqueFd fd_;
};

class CgroupEvents final : public PressureSource {
 public:
  CgroupEvents(int fd, MemoryEvents seen) : fd_(fd), seen_(seen) {}
  std::string_view name() const override { return "cgroup"; }
  int fd() const override { return fd_.get(); }
  // kernfs signals a changed file with POLLPRI|POLLERR; reading it again re-arms.
  short events() const override { return POLLPRI | POLLERR; }
  bool consume() override {
    MemoryEvents now = parse_memory_events(read_all());
    bool rose = pressure_rose(seen_, now);
    seen_ = now;
    return rose;
  }
  std::string read_all() const {
    char text[512];
    ssize_t n = pread(fd_.get(), text, sizeof text - 1, 0);
    return n > 0 ? std::string(text, static_cast<std::size_t>(n)) : std::string();
  }

 private:
  UniqueFd fd_;
  MemoryEvents seen_;
};

}  // namespace

std::unique_ptr<PressureSource> open_psi_trigger(std::string_view trigger, std::string& why_not) {
  int fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why_not = std::string("open /proc/pressure/memory: ") + std::strerror(errno);
    return nullptr;
  }
  auto source = std::make_unique<PsiTrigger>(fd);
  std::string text(trigger);
  if (write(fd, text.c_str(), text.size() + 1) < 0) {
    why_not = "psi trigger \"" + text + "\": " + std::strerror(errno);
    return nullptr;
  }
  return source;
}

std::optional<std::string> cgroup2_mount_point(std::string_view mountinfo) {
  // "36 25 0:31 / /sys/fs/cgroup/unified rw,relatime shared:9 - cgroup2 cgroup2 rw"
  std::istringstream lines{std::string(mountinfo)};
  for (std::string line; std::getline(lines, line);) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream fields(line.substr(0, dash));
    std::string id, parent, dev, root, mount_point;
    if (fields >> id >> parent >> dev >> root >> mount_point) return mount_point;
  }
  return std::nullopt;
}

std::optional<std::string> cgroup2_path(std::string_view proc_self_cgroup) {
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return std::nullopt;
}

std::optional<std::string> limited_cgroup_dir(const std::string& root, const std::string& dir) {
  std::string path = dir;
  for (;;) {
    for (const char* limit : {"/memory.high", "/memory.max"}) {
      std::string value = trim(read_text(root + path + limit));
      if (!value.empty() && value != "max") return root + path;
    }
    if (path.empty() || path == "/") return std::nullopt;
    path.erase(path.rfind('/'));
  }
}

MemoryEvents parse_memory_events(std::string_view text) {
  MemoryEvents events;
  std::istringstream lines{std::string(text)};
  std::string key;
  std::uint64_t value;
  while (lines >> key >> value) {
    if (key == "high") events.high = value;
    if (key == "max") events.max = value;
    if (key == "oom") events.oom = value;
  }
  return events;
}

bool pressure_rose(const MemoryEvents& before, const MemoryEvents& now) {
  return now.high > before.high || now.max > before.max || now.oom > before.oom;
}

std::unique_ptr<PressureSource> open_cgroup_memory_events(std::string& why_not) {
  auto mount = cgroup2_mount_point(read_text("/proc/self/mountinfo"));
  auto path = cgroup2_path(read_text("/proc/self/cgroup"));
  if (!mount || !path) {
    why_not = "no cgroup v2";
    return nullptr;
  }
  auto dir = limited_cgroup_dir(*mount, *path == "/" ? std::string() : *path);
  if (!dir) {
    why_not = "cgroup " + *path + " has no memory limit";
    return nullptr;
  }
  std::string events = *dir + "/memory.events";
  int fd = open(events.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why_not = "open " + events + ": " + std::strerror(errno);
    return nullptr;
  }
  auto source = std::make_unique<CgroupEvents>(fd, MemoryEvents{});
  source->consume();  // remember the counts so far
  return source;
}

void add_memory_pressure_sources(ShrinkerOptions& options, std::string_view psi_trigger) {
  std::string why_not;
  if (auto psi = open_psi_trigger(psi_trigger, why_not))
    options.sources.push_back(std::move(psi));
  else
    options.unavailable.push_back(why_not);
  if (auto cgroup = open_cgroup_memory_events(why_not))
    options.sources.push_back(std::move(cgroup));
  else
    options.unavailable.push_back(why_not);
}

}  // namespace cused::host

// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/private_dev.h"

#include <fmt/format.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace cused::run {

namespace {

// Where libbinder looks for the driver's features (Android 14's ProcessState reads exactly
// /dev/binderfs/features/NAME): in the program's /dev, a symlink to the whole mount.
constexpr const char* kBinderfsLink = "/binderfs";

bool inside(const std::string& point, const std::string& dir) {
  return point == dir || point.starts_with(dir + "/");
}

// The mount points under /dev, outermost first, without those inside another (a recursive bind
// of the outer one brings them) and without a host binderfs at /dev/binderfs, which the link to
// the daemon's mount replaces.
std::vector<std::string> dev_submounts() {
  std::vector<std::string> points;
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    if (point.starts_with("/dev/") && !inside(point, std::string("/dev") + kBinderfsLink))
      points.push_back(point);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<std::string> outer;
  for (const auto& point : points)
    if (std::none_of(outer.begin(), outer.end(),
                     [&](const std::string& o) { return inside(point, o); }))
      outer.push_back(point);
  return outer;
}

int failed(std::string& error, const std::string& what) {
  int err = errno;
  error = fmt::format("{}: {}", what, std::strerror(err));
  return -err;
}

}  // namespace

int make_private_dev(const std::string& mount, const std::vector<std::string>& names,
                     std::string& error) {
  // The overlay's upper layer lives on a tmpfs mounted in this namespace only, on a directory
  // made for it and removed again (the directory is the host's; the tmpfs is not).
  char stage_template[] = "/tmp/cused-run-dev-XXXXXX";
  const char* made = mkdtemp(stage_template);
  if (!made) return failed(error, "mkdtemp");
  const std::string stage = made;
  auto cleanup_stage = [&] {
    umount2(stage.c_str(), MNT_DETACH);
    rmdir(stage.c_str());
  };
  if (::mount("cused-run", stage.c_str(), "tmpfs", MS_NOSUID, "mode=0755") != 0) {
    int err = failed(error, "tmpfs on " + stage);
    rmdir(stage.c_str());
    return err;
  }
  const std::string upper = stage + "/upper", work = stage + "/work", dev = stage + "/dev";
  for (const auto& dir : {upper, work, dev})
    if (mkdir(dir.c_str(), 0755) != 0) {
      int err = failed(error, "mkdir " + dir);
      cleanup_stage();
      return err;
    }
  const std::string options = fmt::format("lowerdir=/dev,upperdir={},workdir={}", upper, work);
  if (::mount("cused-run", dev.c_str(), "overlay", 0, options.c_str()) != 0) {
    int err = failed(error, "overlay of /dev");
    cleanup_stage();
    return err;
  }
  for (const auto& point : dev_submounts()) {
    const std::string target = dev + point.substr(4);
    if (::mount(point.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
      int err = failed(error, "bind " + point);
      cleanup_stage();
      return err;
    }
  }
  std::vector<std::pair<std::string, std::string>> links;  // (name in /dev, target)
  for (const auto& name : names) links.emplace_back("/" + name, mount + "/" + name);
  links.emplace_back(kBinderfsLink, mount);
  for (const auto& [name, target] : links) {
    const std::string link = dev + name;
    // A host file of that name is hidden (a whiteout in the overlay); a host directory (an
    // unmounted /dev/binderfs) too, since the overlay removes a lower directory as a whole.
    if (unlink(link.c_str()) != 0 && errno == EISDIR) rmdir(link.c_str());
    if (symlink(target.c_str(), link.c_str()) != 0) {
      int err = failed(error, "symlink " + link);
      cleanup_stage();
      return err;
    }
  }
  if (::mount(dev.c_str(), "/dev", nullptr, MS_MOVE, nullptr) != 0) {
    int err = failed(error, "move the overlay onto /dev");
    cleanup_stage();
    return err;
  }
  cleanup_stage();  // the overlay keeps its upper layer's tmpfs alive
  return 0;
}

}  // namespace cused::run

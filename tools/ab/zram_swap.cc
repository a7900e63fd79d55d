// SPDX-License-Identifier: GPL-2.0-only
#include "tools/ab/zram_swap.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/swap.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tools/ab/child_process.h"

namespace cused::tools::ab {

namespace {

bool machine_swaps() {
  std::ifstream swaps("/proc/swaps");
  std::string line;
  std::getline(swaps, line);  // the header
  return static_cast<bool>(std::getline(swaps, line));
}

void write_value(const std::string& file, const std::string& value) {
  std::ofstream out(file);
  out << value;
  if (!out.flush()) throw std::runtime_error(fmt::format("cannot write {} to {}", value, file));
}

// swapoff, then hot_remove; both retried for a while, since the device can stay busy for a moment
// after swapoff returns (seen on Ctrl-C: hot_remove refused with the device just swapped off).
void remove_zram(int device) {
  auto node = fmt::format("/dev/zram{}", device);
  auto number = std::to_string(device);
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (swapoff(node.c_str()) != 0 && errno != EINVAL) {  // EINVAL: not (or no longer) swap
      usleep(20'000);
      continue;
    }
    int control = open("/sys/class/zram-control/hot_remove", O_WRONLY | O_CLOEXEC);
    if (control < 0) return;
    bool removed = write(control, number.data(), number.size()) >= 0 || errno == ENODEV;
    close(control);
    if (removed) return;
    usleep(20'000);
  }
}

}  // namespace

ZramSwap::ZramSwap() {
  if (machine_swaps()) return;
  int device = -1;
  std::ifstream("/sys/class/zram-control/hot_add") >> device;
  if (device < 0)
    throw std::runtime_error(
        "conditions.memcg: no swap, and no zram device to add (modprobe zram)");
  device_ = device;
  on_stop_signal_.emplace([device] { remove_zram(device); });
  try {
    make_swap(device);
  } catch (...) {  // a constructor that throws runs no destructor
    on_stop_signal_.reset();
    remove_zram(device);
    throw;
  }
}

void ZramSwap::make_swap(int device) {
  auto block = fmt::format("/sys/block/zram{}", device);
  try {
    write_value(block + "/comp_algorithm", "lz4");
  } catch (const std::runtime_error&) {  // the kernel's default compressor then
  }
  write_value(block + "/disksize", "4G");
  auto node = fmt::format("/dev/zram{}", device);
  ChildProcess mkswap({"mkswap", node}, {.quiet = true});
  while (mkswap.running()) usleep(20'000);
  if (!WIFEXITED(mkswap.ended_status()) || WEXITSTATUS(mkswap.ended_status()) != 0)
    throw std::runtime_error("mkswap " + node + " failed");
  // Preferred over any other swap, as Android's zram is.
  int priority = (100 << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK;
  if (swapon(node.c_str(), SWAP_FLAG_PREFER | priority) != 0)
    throw std::runtime_error(fmt::format("swapon {}: {}", node, std::strerror(errno)));
}

ZramSwap::~ZramSwap() {
  if (!device_) return;
  remove_zram(*device_);
  on_stop_signal_.reset();  // after: a stop signal meanwhile removes it too, harmlessly
}

}  // namespace cused::tools::ab

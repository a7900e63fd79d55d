// SPDX-License-Identifier: GPL-2.0-only
#include "cused/cuse/node.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "uapi/cused_cuse.h"

namespace cused::cuse {

namespace {

std::string make_socket_path(const NodeOptions& options) {
  std::filesystem::path dir =
      options.socket_dir.empty() ? uapi::kCuseSocketDir : options.socket_dir;
  std::filesystem::create_directories(dir);
  return (dir / (options.name + ".sock")).string();
}

devices::DeviceId register_device(devices::DeviceRegistry& registry, const NodeOptions& options) {
  auto added = registry.add_device(options.name, options.variant, devices::Frontend::kCuse);
  if (added.error == 0) return added.id;
  throw std::runtime_error(fmt::format(
      "cused: --cuse {}: {}{}", options.name, std::strerror(-added.error),
      added.error == -EEXIST ? " (device names are the daemon's: the mount or another --cuse has "
                               "it)"
                             : ""));
}

}  // namespace

Node::Registration::Registration(devices::DeviceRegistry& registry, const NodeOptions& options)
    : registry_(registry), id_(register_device(registry, options)) {}

Node::Node(devices::DeviceRegistry& registry, NodeOptions options)
    : registration_(registry, options),
      device_(registry, registration_.device()),
      map_server_(make_socket_path(options),
                  [this](std::uint64_t token) { return device_.mapping_of(token); }),
      session_(device_, options.session) {}

Node::~Node() {
  session_.stop();
  // While the session exists: releases may notify its poll handles.
  device_.release_all();
}

}  // namespace cused::cuse

#include "cused/cuse/node.h"

#include <filesystem>

#include "uapi/cused_cuse.h"

namespace cused::cuse {

namespace {

std::string make_socket_path(const NodeOptions& options) {
  std::filesystem::path dir =
      options.socket_dir.empty() ? uapi::kCuseSocketDir : options.socket_dir;
  std::filesystem::create_directories(dir);
  return (dir / (options.device->name() + ".sock")).string();
}

}  // namespace

Node::Node(NodeOptions options)
    : device_(options.device),
      map_server_(make_socket_path(options),
                  [this](std::uint64_t token) { return device_.mapping_of(token); }),
      session_(device_, options.session) {}

Node::~Node() {
  session_.stop();
  // While the session exists: releases may notify its poll handles.
  device_.release_all();
}

}  // namespace cused::cuse

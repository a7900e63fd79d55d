// `cused --cuse NAME[:SPEC]`: one binder device as the character device /dev/NAME (CUSE), with
// the socket its shim maps buffers through (<socket dir>/NAME.sock). Several can run in one
// daemon, next to or instead of the binderfs mount, each with its own variant.
#pragma once

#include <memory>
#include <string>

#include "core/device.h"
#include "cused/cuse/device.h"
#include "cused/cuse/map_server.h"
#include "cused/cuse/session.h"

namespace cused::cuse {

struct NodeOptions {
  std::shared_ptr<core::Device> device;
  std::string socket_dir;  // uapi::kCuseSocketDir unless set
  SessionOptions session;
};

class Node {
 public:
  // Throws std::runtime_error (no CUSE, not root, name taken) or std::system_error (socket).
  explicit Node(NodeOptions options);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& node_path() const { return session_.node_path(); }
  const std::string& socket_path() const { return map_server_.path(); }

 private:
  Device device_;
  MapServer map_server_;  // before the node exists: a client may map as soon as it can open
  Session session_;
};

}  // namespace cused::cuse

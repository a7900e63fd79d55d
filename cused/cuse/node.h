// SPDX-License-Identifier: GPL-2.0-only
// `cused --cuse NAME[:SPEC]`: one binder device as the character device /dev/NAME (CUSE), with
// the socket its shim maps buffers through (<socket dir>/NAME.sock). Several can run in one
// daemon, next to or instead of the binderfs mount, each with its own variant; each is a device
// of the daemon's DeviceRegistry while the node exists, so binderctl changes its variant live.
#pragma once

#include <memory>
#include <string>

#include "core/device_options.h"
#include "cused/cuse/device.h"
#include "cused/cuse/map_server.h"
#include "cused/cuse/session.h"
#include "cused/devices/device_registry.h"

namespace cused::cuse {

struct NodeOptions {
  std::string name{};
  core::DeviceOptions variant{};
  std::string socket_dir{};  // uapi::kCuseSocketDir unless set
  SessionOptions session{};
};

class Node {
 public:
  // Creates device options.name in `registry` (which must outlive the node) and serves it.
  // Throws std::runtime_error (the registry refuses the name, no CUSE, not root, name taken in
  // the kernel) or std::system_error (socket).
  Node(devices::DeviceRegistry& registry, NodeOptions options);
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  const std::string& node_path() const { return session_.node_path(); }
  const std::string& socket_path() const { return map_server_.path(); }

 private:
  // The node's device in the registry, from creation until the node is gone: then its name is
  // free again, and its procs, if any are left, keep it.
  class Registration {
   public:
    Registration(devices::DeviceRegistry& registry, const NodeOptions& options);
    ~Registration() { registry_.remove_device(id_); }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    std::shared_ptr<core::Device> device() const { return registry_.device(id_); }

   private:
    devices::DeviceRegistry& registry_;
    devices::DeviceId id_;
  };

  Registration registration_;
  Device device_;
  MapServer map_server_;  // before the node exists: a client may map as soon as it can open
  Session session_;
};

}  // namespace cused::cuse

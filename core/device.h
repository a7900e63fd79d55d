// One binder device (a binderfs node such as `binder`, `hwbinder`): its context (the context
// manager slot, S1.2) and the procs opened on it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "core/buffer_file.h"
#include "core/client_mapping.h"

namespace cused::core {

class Proc;

// Who opened the node (S1.2): thread-group id, the opening thread, effective uid.
struct OpenerIdentity {
  pid_t pid = 0;
  pid_t tid = 0;
  uid_t euid = 0;
};

class Device : public std::enable_shared_from_this<Device> {
 public:
  explicit Device(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // S1.1: every open is a fresh proc with its own buffer space.
  std::shared_ptr<Proc> open(const OpenerIdentity& opener, std::unique_ptr<BufferFile> buffers,
                             std::unique_ptr<MappingFinder> mapping);

 private:
  const std::string name_;
};

}  // namespace cused::core

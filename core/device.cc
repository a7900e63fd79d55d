#include "core/device.h"

#include "core/proc.h"

namespace cused::core {

std::shared_ptr<Proc> Device::open(const OpenerIdentity& opener,
                                   std::unique_ptr<BufferFile> buffers,
                                   std::unique_ptr<MappingFinder> mapping) {
  return std::make_shared<Proc>(shared_from_this(), opener, std::move(buffers), std::move(mapping));
}

}  // namespace cused::core

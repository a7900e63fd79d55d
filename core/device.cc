#include "core/device.h"

#include <stdexcept>

#include "core/driver.h"
#include "core/proc.h"

namespace cused::core {

namespace {

DeviceOptions with_defaults(DeviceOptions options) {
  if (!options.labels) options.labels = std::make_shared<FixedLabel>(kDefaultSecurityLabel);
  return options;
}

}  // namespace

Device::Device(std::string name, DeviceOptions options, std::shared_ptr<Driver> driver)
    : name_(std::move(name)),
      options_(with_defaults(std::move(options))),
      driver_(driver ? std::move(driver) : Driver::shared_default()),
      context_(options_.lock_policy) {
  // Every binary that makes devices gives its Driver a timer (the daemon's frontends the host's,
  // tests a fake): without one, BINDER_FREEZE with a timeout could not end.
  if (!driver_->has_timer())
    throw std::logic_error("cused: Device \"" + name_ + "\" on a Driver without a Timer");
}

Device::~Device() = default;

DeviceOptions Device::options() const {
  sync::LockGuard guard(options_lock_);
  return options_;
}

void Device::set_options(DeviceOptions options) {
  options = with_defaults(std::move(options));
  sync::LockGuard guard(options_lock_);
  options_ = std::move(options);
}

std::shared_ptr<Proc> Device::open(const OpenerIdentity& opener,
                                   std::unique_ptr<BufferFile> buffers,
                                   std::unique_ptr<MappingFinder> mapping) {
  auto proc = std::make_shared<Proc>(shared_from_this(), options(), opener, std::move(buffers),
                                     std::move(mapping));
  driver_->add_proc(proc);
  // The frontend's pointer: when its last copy goes, the proc is released (S1.9). The engine
  // keeps its own references (threads, nodes, transactions) until release() drops them.
  return std::shared_ptr<Proc>(proc.get(), [proc](Proc*) mutable {
    proc->release();
    proc.reset();
  });
}

}  // namespace cused::core

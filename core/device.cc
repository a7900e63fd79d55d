// SPDX-License-Identifier: GPL-2.0-only
#include "core/device.h"

#include <stdexcept>

#include "core/driver.h"

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

}  // namespace cused::core

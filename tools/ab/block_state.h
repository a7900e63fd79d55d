// SPDX-License-Identifier: GPL-2.0-only
// What gives one block of binder-ab --blocks its fresh state while its pairs run: a
// --block-setup command (block_setup.h) or, for `binder-ab run FILE`, the daemon, servicemanagers,
// background programs, cgroup and zram binder-ab starts itself (experiment_block.h). Stopped when
// the block's pairs are measured, so that the next block starts from nothing this one left.
#pragma once

#include <chrono>
#include <string>

namespace cused::tools::ab {

class BlockState {
 public:
  virtual ~BlockState() = default;
  // Whether the state still stands (its setup command, its daemon).
  virtual bool running() = 0;
  // Once running() is false: what ended it ("exited with status 1").
  virtual std::string describe_end() const = 0;
  // Tears the state down. Idempotent; the destructor does it too.
  virtual void stop(std::chrono::duration<double> grace = std::chrono::seconds(5)) = 0;
};

}  // namespace cused::tools::ab

// SPDX-License-Identifier: GPL-2.0-only
// The fixture of the tests that read binder_logs back (debug_print_test.cc, stats_test.cc,
// transaction_log_test.cc): a World whose driver's logs are parsed with tests/binder_logs_text.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/debug_print.h"
#include "tests/binder_logs_text.h"
#include "tests/unit/core/world.h"

namespace cused::core::test {

using cused::testing::lines_of;
using cused::testing::matching;
using cused::testing::proc_block;
using cused::testing::value_of;

class LogsWorld : public World {
 protected:
  Driver& driver() { return *env.driver; }
  // binder_logs/stats of this world's one device.
  std::string stats() {
    std::vector<std::shared_ptr<Device>> devices{env.device};
    return DebugPrint::stats(driver(), devices);
  }
};

}  // namespace cused::core::test

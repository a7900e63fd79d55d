// Where cused fails a conformance test that the kernel passes, the test is an engine bug report:
// it stays as is and skips only on cused, naming the write-up in docs/conformance.md ("Known
// cused differences/bugs"), so that main stays green until the engine is fixed. Deliberate
// differences use CUSED_SKIP_WHERE_CUSED_DIFFERS (client/cused_differences.h) instead.
// CONFORMANCE_RUN_KNOWN_BUGS=1 runs these tests on cused anyway (to reproduce or check a fix).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

#include "client/cused_differences.h"

#define CUSED_SKIP_KNOWN_ENGINE_BUG(path, bug_id)                                             \
  do {                                                                                        \
    if (::cused::client::served_by_cused(path) && !std::getenv("CONFORMANCE_RUN_KNOWN_BUGS")) \
      GTEST_SKIP() << "known cused engine bug " bug_id ": see docs/conformance.md";           \
  } while (0)

// SPDX-License-Identifier: GPL-2.0-only
// Whether a divergence that a slower run of the script does not show is timing the harness can
// show (docs/reliability.md, "Differential testing"; issue 48): the first run's first difference
// is a late answer. Anything else is "diverged, timing-dependent": a race in cused that shows
// in some runs only, counted and saved as a failure.
#pragma once

#include "tests/diff/compare.h"

namespace cused::diff {

// True when, at the first difference `v` between `kernel` and `cused`, one side shows a call as
// parked (or with no answer within the settle time) that the other answered at the same step
// and thread, or one side's diverging line, but for its step, is a later line of the other (a
// woken call answered at a later step).
bool late_answer(const Trace& kernel, const Trace& cused, const Verdict& v);

}  // namespace cused::diff

// SPDX-License-Identifier: GPL-2.0-only
// The one place the CUSE frontend includes libfuse's CUSE API, at the binderfs frontend's API
// level (cused/fuse/fuse.h, which must come first: cuse_lowlevel.h picks an old level of its
// own otherwise).
#pragma once

// clang-format off
#include "cused/fuse/fuse.h"
#include <cuse_lowlevel.h>
// clang-format on

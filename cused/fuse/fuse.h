// SPDX-License-Identifier: GPL-2.0-only
// The one place that includes libfuse, with the API level cused is written against (3.17:
// passthrough backing files, want_ext feature flags).
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 317
#endif
#include <fuse_lowlevel.h>

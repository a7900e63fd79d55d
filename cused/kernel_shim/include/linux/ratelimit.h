/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/ratelimit.h> of the kernel: part of the emulated kernel API. */
#include "cused_kernel_api.h"

/* SPDX-License-Identifier: GPL-2.0-only */
/* <linux/mutex.h> of the kernel: part of the emulated kernel API. */
#include "cused_kernel_api.h"

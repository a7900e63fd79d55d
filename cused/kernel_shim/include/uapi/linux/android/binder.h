/* SPDX-License-Identifier: GPL-2.0-only */
/* The binder UAPI types binder_alloc.h uses (64-bit binder: sizes and pointers are 64 bits). */
#ifndef CUSED_SHIM_UAPI_BINDER_H
#define CUSED_SHIM_UAPI_BINDER_H
#include "cused_kernel_api.h"
typedef __u64 binder_size_t;
typedef __u64 binder_uintptr_t;
#endif

// SPDX-License-Identifier: GPL-2.0-only
// bionic's <stdatomic.h> in C++ is <atomic> with its names in the global namespace (IMemory.cpp
// includes <stdatomic.h> from C++ and uses memory_order_* unqualified). Debian's compilers' own
// <stdatomic.h> is C only: in C++ its macros break <atomic>. In C this is the compiler's header.
#pragma once

#ifdef __cplusplus
#include <atomic>
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_sub_explicit;
using std::atomic_load_explicit;
using std::atomic_store_explicit;
using std::atomic_thread_fence;
using std::memory_order;
using std::memory_order_acq_rel;
using std::memory_order_acquire;
using std::memory_order_consume;
using std::memory_order_relaxed;
using std::memory_order_release;
using std::memory_order_seq_cst;
#else
#include_next <stdatomic.h>
#endif

// SPDX-License-Identifier: GPL-2.0-only
// bionic's <stdatomic.h> in C++ is <atomic> with its names in the global namespace (liblog,
// cutils/atomic.h, cutils/trace.h, LightRefBase.h and IMemory.cpp use them unqualified from C++).
// libc++ 14 and clang 14 have only the C header, whose macros break <atomic> in C++ (as for the
// Android 10 build, tests/aosp/host/include/stdatomic.h). In C this is the compiler's header.
#pragma once

#ifdef __cplusplus
#include <atomic>
#define _Atomic(t) std::atomic<t>
using std::atomic_bool;
using std::atomic_char;
using std::atomic_compare_exchange_strong;
using std::atomic_compare_exchange_strong_explicit;
using std::atomic_compare_exchange_weak;
using std::atomic_compare_exchange_weak_explicit;
using std::atomic_exchange;
using std::atomic_exchange_explicit;
using std::atomic_fetch_add;
using std::atomic_fetch_add_explicit;
using std::atomic_fetch_and;
using std::atomic_fetch_and_explicit;
using std::atomic_fetch_or;
using std::atomic_fetch_or_explicit;
using std::atomic_fetch_sub;
using std::atomic_fetch_sub_explicit;
using std::atomic_flag;
using std::atomic_init;
using std::atomic_int;
using std::atomic_int_fast32_t;
using std::atomic_int_fast64_t;
using std::atomic_int_least32_t;
using std::atomic_int_least64_t;
using std::atomic_intptr_t;
using std::atomic_llong;
using std::atomic_load;
using std::atomic_load_explicit;
using std::atomic_long;
using std::atomic_signal_fence;
using std::atomic_size_t;
using std::atomic_store;
using std::atomic_store_explicit;
using std::atomic_thread_fence;
using std::atomic_uint;
using std::atomic_uint_fast32_t;
using std::atomic_uint_least32_t;
using std::atomic_uint_least64_t;
using std::atomic_uintptr_t;
using std::atomic_ullong;
using std::atomic_ulong;
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

// SPDX-License-Identifier: GPL-2.0-only
// ThreadSanitizer's custom-mutex annotations, compiled away outside TSan builds.
//
// Why annotate at all: with them TSan treats core/sync's futex locks as mutexes. Its reports then
// list the locks each thread held, its deadlock detector sees lock-order inversions in core's lock
// structure (the proc, node and allocator locks), and misuse (unlocking a lock that is not held,
// locking one twice) is reported. The price: TSan trusts an annotated lock and ignores the atomics
// inside it. So the sync unit tests are built a second time in TSan builds with
// CUSED_TSAN_LOCK_ANNOTATIONS=0 (tests/unit/sync/meson.build), where TSan derives every
// happens-before edge from the locks' own acquire/release atomics and so checks them.
#pragma once

#if !defined(CUSED_TSAN_LOCK_ANNOTATIONS)
#if defined(__SANITIZE_THREAD__)
#define CUSED_TSAN_LOCK_ANNOTATIONS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CUSED_TSAN_LOCK_ANNOTATIONS 1
#endif
#endif
#endif
#if !defined(CUSED_TSAN_LOCK_ANNOTATIONS)
#define CUSED_TSAN_LOCK_ANNOTATIONS 0
#endif

#if CUSED_TSAN_LOCK_ANNOTATIONS
#include <sanitizer/tsan_interface.h>
#endif

namespace cused::sync::tsan {

#if CUSED_TSAN_LOCK_ANNOTATIONS
inline void pre_lock(void* lock) { __tsan_mutex_pre_lock(lock, 0); }
inline void post_lock(void* lock) { __tsan_mutex_post_lock(lock, 0, 0); }
inline void pre_try_lock(void* lock) { __tsan_mutex_pre_lock(lock, __tsan_mutex_try_lock); }
inline void post_try_lock(void* lock, bool acquired) {
  __tsan_mutex_post_lock(lock,
                         __tsan_mutex_try_lock | (acquired ? 0 : __tsan_mutex_try_lock_failed), 0);
}
inline void pre_unlock(void* lock) { __tsan_mutex_pre_unlock(lock, 0); }
inline void post_unlock(void* lock) { __tsan_mutex_post_unlock(lock, 0); }
inline void destroy(void* lock) { __tsan_mutex_destroy(lock, 0); }
// Around code that runs inside lock() but is not part of the lock (test hooks).
inline void pre_divert(void* lock) { __tsan_mutex_pre_divert(lock, 0); }
inline void post_divert(void* lock) { __tsan_mutex_post_divert(lock, 0); }
#else
inline void pre_lock(void*) {}
inline void post_lock(void*) {}
inline void pre_try_lock(void*) {}
inline void post_try_lock(void*, bool) {}
inline void pre_unlock(void*) {}
inline void post_unlock(void*) {}
inline void destroy(void*) {}
inline void pre_divert(void*) {}
inline void post_divert(void*) {}
#endif

}  // namespace cused::sync::tsan

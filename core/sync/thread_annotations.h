// SPDX-License-Identifier: GPL-2.0-only
// Clang -Wthread-safety attributes. Every lock-guarded field in core names its lock with
// CUSED_GUARDED_BY so that a build with clang checks the lock structure we claim mirrors the
// kernel's. Under g++ these expand to nothing.
#pragma once

#if defined(__clang__)
#define CUSED_TSA(x) __attribute__((x))
#else
#define CUSED_TSA(x)
#endif

#define CUSED_CAPABILITY(name) CUSED_TSA(capability(name))
#define CUSED_SCOPED_CAPABILITY CUSED_TSA(scoped_lockable)
#define CUSED_GUARDED_BY(x) CUSED_TSA(guarded_by(x))
#define CUSED_PT_GUARDED_BY(x) CUSED_TSA(pt_guarded_by(x))
#define CUSED_ACQUIRED_BEFORE(...) CUSED_TSA(acquired_before(__VA_ARGS__))
#define CUSED_ACQUIRED_AFTER(...) CUSED_TSA(acquired_after(__VA_ARGS__))
#define CUSED_REQUIRES(...) CUSED_TSA(requires_capability(__VA_ARGS__))
#define CUSED_EXCLUDES(...) CUSED_TSA(locks_excluded(__VA_ARGS__))
#define CUSED_ACQUIRE(...) CUSED_TSA(acquire_capability(__VA_ARGS__))
#define CUSED_RELEASE(...) CUSED_TSA(release_capability(__VA_ARGS__))
#define CUSED_TRY_ACQUIRE(...) CUSED_TSA(try_acquire_capability(__VA_ARGS__))
#define CUSED_RETURN_CAPABILITY(x) CUSED_TSA(lock_returned(x))
#define CUSED_ASSERT_CAPABILITY(x) CUSED_TSA(assert_capability(x))
#define CUSED_NO_THREAD_SAFETY_ANALYSIS CUSED_TSA(no_thread_safety_analysis)

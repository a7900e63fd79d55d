// SPDX-License-Identifier: GPL-2.0-only
// Android builds libbinder against bionic's copy of the Android common kernel's uapi binder.h,
// which the tarball does not carry; the host's (mainline) <linux/android/binder.h> lacks the
// Android kernel's scheduling-policy flags of flat_binder_object, which Parcel.cpp sets (a
// node's minimum policy, inherit_rt). They are added here with the Android kernel's values; a
// mainline driver ignores those bits (docs/aosp.md, "Android 14").
#pragma once

#include_next <linux/android/binder.h>

#ifndef FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT
enum {
  FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT = 9,
};
enum {
  FLAT_BINDER_FLAG_SCHED_POLICY_MASK = 3U << FLAT_BINDER_FLAG_SCHED_POLICY_SHIFT,
  FLAT_BINDER_FLAG_INHERIT_RT = 0x800,
};
#endif

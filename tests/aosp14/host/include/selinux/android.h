// SPDX-License-Identifier: GPL-2.0-only
// Android 14's servicemanager (cmds/servicemanager/Access.cpp) includes <selinux/android.h> and
// <selinux/avc.h>, but built for a host (no __ANDROID__) it calls nothing of them: every access
// is allowed and no label is looked up. The Debian host has no Android SELinux headers, so these
// empty ones stand in for them (docs/aosp.md, "Android 14").
#pragma once

#include <stdlib.h>

// ~Access frees its own context unconditionally (nullptr on a host, where getcon is not called).
inline void freecon(char* context) { free(context); }

// SPDX-License-Identifier: GPL-2.0-only
// Android's additions to libselinux that Android 10's servicemanager calls (the system one; the
// vendor servicemanager is not built); see <selinux/avc.h>.
#pragma once

#include <selinux/avc.h>

#ifdef __cplusplus
extern "C" {
#endif

struct selabel_handle* selinux_android_service_context_handle(void);
int selinux_log_callback(int type, const char* fmt, ...);

#ifdef __cplusplus
}
#endif

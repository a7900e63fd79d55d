// SPDX-License-Identifier: GPL-2.0-only
// The part of Android's libselinux that Android 10's servicemanager calls (service_manager.c
// includes <selinux/android.h> and <selinux/avc.h>). Debian has no Android SELinux policy (no
// service_contexts, usually no SELinux at all), so host/selinux.cc implements a permissive
// policy: every check is allowed. docs/aosp.md, "Stubs".
#pragma once

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned short security_class_t;
struct selabel_handle;

union selinux_callback {
  int (*func_log)(int type, const char* fmt, ...);
  int (*func_audit)(void* auditdata, security_class_t cls, char* msgbuf, size_t msgbufsize);
};
#define SELINUX_CB_LOG 0
#define SELINUX_CB_AUDIT 1

void selinux_set_callback(int type, union selinux_callback callback);
int getcon(char** context);
int getpidcon(pid_t pid, char** context);
void freecon(char* context);
int selinux_check_access(const char* source, const char* target, const char* target_class,
                         const char* permission, void* auditdata);
int selabel_lookup(struct selabel_handle* handle, char** context, const char* key, int type);
void selabel_close(struct selabel_handle* handle);
int selinux_status_open(int fallback);
int selinux_status_updated(void);

#ifdef __cplusplus
}
#endif

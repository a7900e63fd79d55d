// SPDX-License-Identifier: GPL-2.0-only
// A permissive SELinux for Android 10's servicemanager on a Debian host (see <selinux/avc.h>):
// the host has no Android policy to ask, so every access check allows, as an Android device in
// permissive mode does, and the labels are fixed placeholders. What the servicemanager decides
// from them (it registers and finds every service a non-app uid asks for) is then decided by its
// own code alone: its uid checks, its registry and its death handling, which are what the tests
// exercise. The security context that a context manager with FLAT_BINDER_FLAG_TXN_SECURITY_CTX
// receives with each call comes from the driver and is passed to selinux_check_access unread.
#include <selinux/android.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct selabel_handle {};

namespace {

selabel_handle service_contexts;

int duplicate(const char* label, char** context) {
  *context = strdup(label);
  return *context != nullptr ? 0 : -1;
}

}  // namespace

extern "C" {

void selinux_set_callback(int, selinux_callback) {}
int getcon(char** context) { return duplicate("u:r:servicemanager:s0", context); }
int getpidcon(pid_t, char** context) { return duplicate("u:r:unlabeled:s0", context); }
void freecon(char* context) { std::free(context); }
int selinux_check_access(const char*, const char*, const char*, const char*, void*) { return 0; }
int selabel_lookup(selabel_handle*, char** context, const char*, int) {
  return duplicate("u:object_r:default_android_service:s0", context);
}
void selabel_close(selabel_handle*) {}
int selinux_status_open(int) { return 0; }
int selinux_status_updated(void) { return 0; }  // the policy is never reloaded
selabel_handle* selinux_android_service_context_handle(void) { return &service_contexts; }

int selinux_log_callback(int, const char* fmt, ...) {
  va_list arguments;
  va_start(arguments, fmt);
  std::fputs("selinux: ", stderr);
  int written = std::vfprintf(stderr, fmt, arguments);
  va_end(arguments);
  return written;
}

}  // extern "C"

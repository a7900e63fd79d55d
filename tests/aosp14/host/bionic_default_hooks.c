// SPDX-License-Identifier: GPL-2.0-only
// bionic's malloc hooks start as hooks that allocate (its default_malloc_hook and
// default_realloc_hook), so a program can save them and call them from its own hook:
// binderAllocationLimits does exactly that. glibc's start as null once malloc has run. This sets
// them to glibc's allocator proper before the program's own initializers (priority 101: the
// earliest an application may use) save them.
#include <malloc.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_realloc(void* pointer, size_t size);

static void* default_malloc_hook(size_t size, const void* caller) {
  (void)caller;
  return __libc_malloc(size);
}

static void* default_realloc_hook(void* pointer, size_t size, const void* caller) {
  (void)caller;
  return __libc_realloc(pointer, size);
}

__attribute__((constructor(101))) static void install_bionic_default_hooks(void) {
  __malloc_hook = default_malloc_hook;
  __realloc_hook = default_realloc_hook;
}

// SPDX-License-Identifier: GPL-2.0-only
// <malloc.h> with the malloc hooks bionic declares there and glibc no longer does (2.34 removed
// them from its API). glibc keeps them as compatibility symbols of version GLIBC_2.2.5 (x86-64's
// first), and libc_malloc_debug.so, linked into the program, is the malloc that calls them, as
// glibc's manual says for programs that use them. Only binderAllocationLimits sees this header.
#pragma once
#include_next <malloc.h>

#ifdef __cplusplus
extern "C" {
#endif
extern void* (*__malloc_hook)(size_t size, const void* caller);
extern void* (*__realloc_hook)(void* pointer, size_t size, const void* caller);
#ifdef __cplusplus
}
#endif
__asm__(".symver __malloc_hook,__malloc_hook@GLIBC_2.2.5");
__asm__(".symver __realloc_hook,__realloc_hook@GLIBC_2.2.5");

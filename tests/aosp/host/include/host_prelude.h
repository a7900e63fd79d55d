// SPDX-License-Identifier: GPL-2.0-only
// Force-included (-include) into every AOSP translation unit of the host build
// (tests/aosp/project). Android 10's sources compile against bionic and libc++, whose headers
// pull in more than glibc's and libstdc++'s do and define a few names glibc lacks; this header
// gives a Debian host the same starting point without touching a line of AOSP source.
// docs/aosp.md lists every item and why.
#pragma once

#ifdef __cplusplus
// libc++ includes these from <string>, <vector> and <mutex>; libbinder's headers use
// std::unique_ptr, std::numeric_limits, std::atomic and std::chrono without including them.
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#endif

// bionic's <fcntl.h>, <unistd.h> and <stdlib.h> bring these in: memcpy/strerror, ioctl and
// getrlimit are used by sources that include none of them.
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>

// bionic's <limits.h> defines SIZE_T_MAX (Parcel.cpp, IMemory.cpp) and <sys/user.h> PAGE_SIZE
// (binderLibTest); glibc has neither. x86-64 pages are 4 KiB on Android as here.
#ifndef SIZE_T_MAX
#define SIZE_T_MAX SIZE_MAX
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE 4096
#endif

// bionic's <sys/cdefs.h> defines __unused (the C servicemanager marks parameters with it). Not
// for C++: libstdc++ uses the name itself.
#if !defined(__cplusplus) && !defined(__unused)
#define __unused __attribute__((__unused__))
#endif

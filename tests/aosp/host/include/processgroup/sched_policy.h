// SPDX-License-Identifier: GPL-2.0-only
// libprocessgroup's header, which Debian's <cutils/sched_policy.h> forwards to. IPCThreadState.cpp
// includes <cutils/sched_policy.h> but calls nothing from it (Android 10 moved the scheduling
// policy calls out of libbinder), so nothing is declared here: a call would fail to compile
// rather than reach a stub.
#pragma once

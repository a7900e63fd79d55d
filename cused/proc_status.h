// SPDX-License-Identifier: GPL-2.0-only
// /proc/<tid>/status, the kernel's word on a caller thread: its thread group (S1.3) and its
// signal masks (the io_uring frontend's interrupt watcher).
#pragma once

#include <sys/types.h>

#include <functional>
#include <string_view>

namespace cused {

// Hands each "Name:<tab>value" line of /proc/<tid>/status to `field`, name without the colon and
// value without leading blanks. False when the thread is gone (or /proc is not readable).
bool read_proc_status(
    pid_t tid, const std::function<void(std::string_view name, std::string_view value)>& field);

}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
// Runs a program to its end, its output appended to a log file: the compiler for a kernel
// design (kernel_design_loader.h), patch(1) for a patched tree (kernel_design_check.h).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cused::host {

// Runs `argv` (argv[0] looked up in PATH), stdout and stderr appended to `log`; true when it
// exits 0. A program that cannot be started is said in the log ("cannot run cc: ...").
bool run_program(const std::vector<std::string>& argv, const std::filesystem::path& log);

// Where run_program would find `program`: itself when it holds a '/', else the first executable
// of that name in PATH; nullopt when there is none (a machine without a compiler).
std::optional<std::filesystem::path> find_program(const std::string& program);

}  // namespace cused::host

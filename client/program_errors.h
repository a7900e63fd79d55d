// SPDX-License-Identifier: GPL-2.0-only
// What a cused program says when it fails: one line "PROGRAM: what failed; what to do" on stderr
// and a non-zero exit, whatever was thrown, never std::terminate's "terminate called after
// throwing ...". With it, the words for the two failures a new binder user meets first: a device
// that cannot be opened (and whether a daemon serves it) and a daemon that went away under a
// client.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <system_error>

namespace cused::client {

// A failure the program has already put into words: what() is the line after "PROGRAM: ",
// exit_code() what the program exits with.
class ProgramError : public std::runtime_error {
 public:
  explicit ProgramError(const std::string& message, int exit_code = 1)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// open() of a binder device failed; what() is describe_open_failure's line.
class DeviceOpenError : public std::system_error {
 public:
  DeviceOpenError(const std::string& device, int err);
  const char* what() const noexcept override { return message_.c_str(); }
  const std::string& device() const { return device_; }

 private:
  std::string device_;
  std::string message_;
};

// "open DEVICE: strerror — " and what to do: start cused when nothing serves the device's
// directory, create the device when a cused does but lacks it, unmount a mount whose daemon
// died. `mounts_file` is where cused's mounts are looked up (/proc/mounts format).
std::string describe_open_failure(const std::string& device, int err,
                                  const std::string& mounts_file = "/proc/mounts");

// True for the errnos a binder call on an open device gets once the daemon serving it has exited
// (never from a live driver for the calls a client makes): ENOTCONN once a FUSE daemon has
// exited, ECONNABORTED when it was killed or a call was in flight, ENOSYS from `cused run`.
bool binder_daemon_gone(int err);

// "the binder daemon serving DEVICE went away (strerror); restart cused, then PROGRAM".
std::string describe_daemon_gone(const std::string& device, int err);

// Runs `body` (a program's main) and returns its exit code. Anything it throws becomes one line
// "PROGRAM: what" on stderr (PROGRAM is argv0's file name) and exit code 1, or the ProgramError's
// own code.
int guarded_main(const char* argv0, const std::function<int()>& body);

}  // namespace cused::client

// SPDX-License-Identifier: GPL-2.0-only
#include "client/program_errors.h"

#include <errno.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>

#include "client/cused_mounts.h"

namespace cused::client {

namespace {

namespace fs = std::filesystem;

std::string program_name() { return program_invocation_short_name; }

// The device's directory, absolute, as /proc/mounts names it.
std::string directory_of(const std::string& device) {
  std::error_code error;
  return fs::absolute(device, error).lexically_normal().parent_path().string();
}

bool served_by_cused(const std::string& directory, const std::string& mounts_file) {
  auto mounts = find_cused_mounts(mounts_file);
  return std::find(mounts.begin(), mounts.end(), directory) != mounts.end();
}

std::string open_advice(const std::string& device, int err, const std::string& mounts_file) {
  std::string directory = directory_of(device);
  bool served = served_by_cused(directory, mounts_file);
  switch (err) {
    case ENOENT:
      if (served)
        return fmt::format("cused serves {} but has no device {} there; `binderctl create {}`",
                           directory, fs::path(device).filename().string(),
                           fs::path(device).filename().string());
      return fmt::format(
          "no binder device there; start cused (cused run --servicemanager -- {}, or cused "
          "--mount DIR)",
          program_name());
    case ENOTCONN:
      return fmt::format(
          "the cused that served {} has exited and left its mount; umount {}, then start cused",
          directory, directory);
    case EACCES:
    case EPERM:
      return served ? "binder device nodes are 0600 as in binderfs: run as the daemon's user"
                    : "run as a user that may open it";
    case ENODEV:
    case ENXIO:
      return "no driver serves this node; start cused (or load the kernel's binder)";
    default:
      return served ? fmt::format("cused serves {}; its log says more", directory)
                    : fmt::format("no cused serves {}", directory);
  }
}

}  // namespace

DeviceOpenError::DeviceOpenError(const std::string& device, int err)
    : std::system_error(err, std::generic_category(), "open " + device),
      device_(device),
      message_(describe_open_failure(device, err)) {}

std::string describe_open_failure(const std::string& device, int err,
                                  const std::string& mounts_file) {
  return fmt::format("open {}: {} — {}", device, std::strerror(err),
                     open_advice(device, err, mounts_file));
}

// Seen by servicemanager and binder-throughput under a FUSE mount: the daemon stopping (SIGTERM)
// with the client idle gives ENOTCONN, killed (SIGKILL) or stopped with a call in flight
// ECONNABORTED; under `cused run`, whose supervisor answers for the daemon, ENOSYS.
bool binder_daemon_gone(int err) { return err == ENOTCONN || err == ECONNABORTED || err == ENOSYS; }

std::string describe_daemon_gone(const std::string& device, int err) {
  return fmt::format("the binder daemon serving {} went away ({}); restart cused, then {}", device,
                     std::strerror(err), program_name());
}

int guarded_main(const char* argv0, const std::function<int()>& body) {
  std::string name = fs::path(argv0 ? argv0 : "cused").filename().string();
  auto say = [&name](const char* what) { std::fprintf(stderr, "%s: %s\n", name.c_str(), what); };
  try {
    return body();
  } catch (const ProgramError& error) {
    say(error.what());
    return error.exit_code();
  } catch (const DeviceOpenError& error) {
    say(error.what());
  } catch (const std::system_error& error) {
    // An ioctl's errno thrown on: say what it means when it is the daemon's exit.
    if (error.code().category() == std::generic_category() &&
        binder_daemon_gone(error.code().value()))
      say(fmt::format("{}; the binder daemon went away: restart cused, then {}", error.what(), name)
              .c_str());
    else
      say(error.what());
  } catch (const std::bad_alloc&) {
    say("out of memory; free some, or ask for less (fewer workers, smaller payloads)");
  } catch (const std::exception& error) {
    say(error.what());
  } catch (...) {
    say("failed with an unknown exception; please report it");
  }
  return 1;
}

}  // namespace cused::client

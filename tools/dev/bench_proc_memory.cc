// SPDX-License-Identifier: GPL-2.0-only
// bench-proc-memory: the daemon's memory per idle proc, buffer pages excluded (issue 4 target:
// under 64 KiB). Starts the cused binary, opens N device nodes from this process (each a proc
// with one binder thread after BINDER_VERSION, and a read-only mapping), and reports the
// daemon's RSS growth per proc. Buffer pages are excluded by construction: no transaction runs,
// so no buffer page is ever installed.
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "client/binder_device.h"
#include "client/program_errors.h"

extern char** environ;

namespace {

long rss_kib(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string key;
  long value = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> value;
      return value;
    }
  }
  return -1;
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  CLI::App app{"bench-proc-memory: cused daemon RSS per idle proc"};
  std::string cused = "build/cused/cused";
  int count = 1000;
  app.add_option("--cused", cused, "The cused binary");
  app.add_option("-n,--procs", count, "Procs to open");
  CLI11_PARSE(app, argc, argv);

  rlimit files{static_cast<rlim_t>(count + 64), static_cast<rlim_t>(count + 64)};
  setrlimit(RLIMIT_NOFILE, &files);
  char pattern[] = "/tmp/cused-procmem-XXXXXX";
  std::string dir = mkdtemp(pattern);
  std::vector<std::string> words{cused, "--mount", dir, "--foreground"};
  std::vector<char*> args;
  for (auto& word : words) args.push_back(word.data());
  args.push_back(nullptr);
  pid_t daemon = 0;
  if (posix_spawn(&daemon, args[0], nullptr, nullptr, args.data(), environ) != 0) return 1;
  while (!std::filesystem::exists(dir + "/binder"))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  // Warm up: the first procs pay for lazily grown daemon structures and threads.
  {
    cused::client::BinderDevice warm(dir + "/binder");
    warm.version();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long before = rss_kib(daemon);
  std::vector<cused::client::BinderDevice> devices;
  devices.reserve(count);
  for (int i = 0; i < count; ++i) {
    devices.emplace_back(dir + "/binder");
    devices.back().map();
    devices.back().version();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  long after = rss_kib(daemon);
  fmt::print("procs: {}  daemon RSS before: {} KiB  after: {} KiB  per proc: {:.1f} KiB\n", count,
             before, after, static_cast<double>(after - before) / count);
  devices.clear();
  kill(daemon, SIGTERM);
  waitpid(daemon, nullptr, 0);
  std::filesystem::remove(dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}

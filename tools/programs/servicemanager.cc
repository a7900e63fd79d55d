// SPDX-License-Identifier: GPL-2.0-only
// servicemanager: the context manager of a binder device, answering Android 10's service-manager
// protocol (docs/servicemanager.md) so that unmodified libbinder clients and cused's tools can
// register and find services. Single-threaded, like Android 10's servicemanager. Exit codes: 1 for
// a failure to start (another context manager, a device it cannot open), 3 when the daemon
// serving the device went away under it.
#include <errno.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <string>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/program_errors.h"
#include "core/version.h"
#include "tools/programs/servicemanager_registry.h"

namespace {

using namespace cused;

// Why BINDER_SET_CONTEXT_MGR failed, in the user's terms.
std::string refused_context_manager(const std::string& device, int err) {
  if (err == EBUSY)
    return fmt::format("another context manager is registered on {} ({})", device,
                       std::strerror(err));
  return fmt::format("cannot become context manager of {}: {}", device, std::strerror(err));
}

int run(int argc, char** argv) {
  CLI::App app{"binder context manager speaking Android 10's IServiceManager protocol"};
  app.set_version_flag("--version", cused::version_text("servicemanager", nullptr));
  client::ProcessOptions options;
  options.max_threads = 0;
  bool verbose = false;
  app.add_option("DEVICE,-d,--device", options.device,
                 "binder device node (also as the only argument)")
      ->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "log registrations, lookups refused and deaths");
  CLI11_PARSE(app, argc, argv);

  // One looper thread serves everything, so the process state outlives it trivially.
  client::BinderProcess process(options);
  client::IpcThread thread(process);
  tools::ServiceRegistry registry(thread, verbose);
  int result = process.become_context_manager(
      [&registry](const client::IncomingTransaction& txn, client::Parcel& reply) {
        return registry.on_transaction(txn, reply);
      });
  if (result < 0) throw client::ProgramError(refused_context_manager(options.device, -result));
  process.set_death_handler([&registry](binder_uintptr_t cookie) { registry.on_death(cookie); });
  if (verbose) std::fprintf(stderr, "servicemanager: serving %s\n", options.device.c_str());
  result = thread.join_looper(true);
  if (client::binder_daemon_gone(-result))
    throw client::ProgramError(client::describe_daemon_gone(options.device, -result), 3);
  throw client::ProgramError(fmt::format("looper ended: {}", std::strerror(-result)));
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}

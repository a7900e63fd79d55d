// servicemanager: the context manager of a binder device, answering Android 10's service-manager
// protocol (docs/servicemanager.md) so that unmodified libbinder clients and cused's tools can
// register and find services. Single-threaded, like Android 10's servicemanager.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "core/version.h"
#include "tools/servicemanager_registry.h"

int main(int argc, char** argv) {
  using namespace cused;
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

  try {
    // One looper thread serves everything, so the process state outlives it trivially.
    client::BinderProcess process(options);
    client::IpcThread thread(process);
    tools::ServiceRegistry registry(thread, verbose);
    int result = process.become_context_manager(
        [&registry](const client::IncomingTransaction& txn, client::Parcel& reply) {
          return registry.on_transaction(txn, reply);
        });
    if (result < 0) {
      std::fprintf(stderr, "servicemanager: cannot become context manager: %s\n",
                   std::strerror(-result));
      return 1;
    }
    process.set_death_handler([&registry](binder_uintptr_t cookie) { registry.on_death(cookie); });
    if (verbose) std::fprintf(stderr, "servicemanager: serving %s\n", options.device.c_str());
    result = thread.join_looper(true);
    std::fprintf(stderr, "servicemanager: looper ended: %s\n", std::strerror(-result));
    return 1;
  } catch (const std::system_error& error) {
    std::fprintf(stderr, "servicemanager: %s\n", error.what());
    return 1;
  }
}

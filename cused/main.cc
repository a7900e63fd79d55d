// SPDX-License-Identifier: GPL-2.0-only
// cused: the binder driver as a userspace daemon, serving a binderfs look-alike over FUSE and/or
// binder character devices through CUSE.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "core/alloc/designs/registry.h"
#include "core/device_variant.h"
#include "core/driver.h"
#include "core/trace_event_names.h"
#include "core/version.h"
#include "cused/background.h"
#include "cused/binderfs/filesystem.h"
#include "cused/binderfs/mount.h"
#include "cused/cuse/node.h"
#include "cused/device_links.h"
#include "cused/devices/device_registry.h"
#include "cused/fatal_cleanup.h"
#include "cused/host/kernel_design_check.h"
#include "cused/host/kernel_design_loader.h"
#include "cused/host/memory_pressure.h"
#include "cused/host/proc_attr_label.h"
#include "cused/host/shrinker_thread.h"
#include "cused/host/thread_timer.h"
#include "cused/host/trace_recorder.h"
#include "cused/host/usdt_feed.h"
#include "cused/host/usdt_probes.h"
#include "cused/mount_point.h"
#include "cused/request/failures.h"
#include "cused/run/launcher.h"
#include "cused/run/run_server.h"
#include "cused/service_notify.h"
#include "cused/stop_signals.h"
#include "cused/thread_priorities.h"

namespace {

// `spec` applied to `base`; nullopt, with the parser's message about `what` printed, if it is bad.
std::optional<cused::core::DeviceOptions> parse(const std::string& what, const std::string& spec,
                                                const cused::core::DeviceOptions& base) {
  return cused::core::parse_device_variant(spec, base, [&](const std::string& message) {
    fmt::print(stderr, "cused: {}: {}\n", what, message);
  });
}

// What every device of the daemon starts from: senders labelled by the host's LSM (S4.9).
cused::core::DeviceOptions host_defaults() {
  cused::core::DeviceOptions options;
  options.labels = std::make_shared<cused::host::ProcAttrLabel>(cused::core::kDefaultSecurityLabel);
  return options;
}

// `cused kernel-build TREE [--patch FILE]...`: builds (or finds in the cache) and loads the kernel
// design kernel:TREE (kernel:TREE+FILE... with patches), so that a daemon's first use of it is a
// dlopen; prints the object, or the compiler's or patch's messages.
int build_kernel_design(const std::string& tree, const std::vector<std::string>& patches) {
  std::string name = tree.starts_with("kernel:") ? tree : "kernel:" + tree;
  for (const std::string& patch : patches) name += "+" + patch;
  const auto paths = cused::host::kernel_design_paths();
  std::string error;
  auto source = cused::host::kernel_source_of(name, paths, error);
  auto build = source ? cused::host::build_kernel_design_of(*source, paths, error) : std::nullopt;
  auto object = build ? cused::host::load_kernel_design(name, source->label, build->object, error)
                      : std::nullopt;
  if (!object) {
    fmt::print(stderr, "cused kernel-build: {}: {}\n", name, error);
    return 1;
  }
  fmt::print("{}: Linux {} from {}\n{} ({})\n", name, object->abi->kernel_version, source->label,
             build->object.string(), build->cached ? "cached" : "built");
  return 0;
}

// `cused check-design TREE`: the verdict of the kernel's debug checks on the tree's file; exit 0
// when it passes, 1 when a check fails, 2 when the tree cannot be patched, built or loaded.
int run_design_check(const cused::host::DesignCheckOptions& options) {
  std::string error;
  auto verdict = cused::host::check_kernel_design(options, error);
  if (!verdict) {
    fmt::print(stderr, "cused check-design: {}: {}\n", options.tree, error);
    return 2;
  }
  fmt::print("{}", cused::host::format_verdict(*verdict));
  return verdict->passed() ? 0 : 1;
}

// `--variant SPEC` and `--device NAME[:SPEC]` into `registry` and `options` (docs/design.md
// section 5); false, with the parser's message printed, if a spec is bad.
bool apply_variants(const std::string& default_spec, const std::vector<std::string>& devices,
                    cused::devices::RegistryOptions& registry,
                    cused::binderfs::FilesystemOptions& options) {
  auto default_variant = parse("--variant " + default_spec, default_spec, host_defaults());
  if (!default_variant) return false;
  registry.default_variant = *default_variant;
  if (devices.empty()) return true;
  options.devices.clear();
  for (const auto& text : devices) {
    cused::core::DeviceSpec device = cused::core::split_device_spec(text);
    options.devices.push_back(device.name);
    if (device.variant.empty()) continue;
    auto variant = parse("--device " + text, device.variant, registry.default_variant);
    if (!variant) return false;
    options.variants[device.name] = *variant;
  }
  return true;
}

// The nodes of `--cuse NAME[:SPEC]` arguments, SPEC applied to `base` (--variant); nullopt
// (after saying why) for a bad spec, or a name that is not one or is taken: `taken` holds the
// mount's device names (the daemon's devices share one namespace, cused/devices).
std::optional<std::vector<cused::cuse::NodeOptions>> cuse_nodes_of(
    const std::vector<std::string>& specs, const cused::core::DeviceOptions& base,
    std::vector<std::string> taken) {
  std::vector<cused::cuse::NodeOptions> nodes;
  for (const auto& text : specs) {
    auto spec = cused::core::split_device_spec(text);
    auto variant = parse("--cuse " + text, spec.variant, base);
    if (!variant) return std::nullopt;
    if (spec.name.empty() || spec.name.find('/') != std::string::npos) {
      fmt::print(stderr, "cused: --cuse {}: not a device name\n", text);
      return std::nullopt;
    }
    if (std::find(taken.begin(), taken.end(), spec.name) != taken.end()) {
      fmt::print(stderr, "cused: --cuse {}: the daemon has a device {} already\n", text, spec.name);
      return std::nullopt;
    }
    taken.push_back(spec.name);
    nodes.push_back({spec.name, *variant});
  }
  return nodes;
}

// What a background daemon tells the user it serves: the mount, and/or the CUSE devices.
std::string served_text(const std::string& mountpoint, const std::vector<std::string>& cuse_specs) {
  std::vector<std::string> served;
  if (!mountpoint.empty()) served.push_back(mountpoint);
  for (const auto& spec : cuse_specs)
    served.push_back("/dev/" + cused::core::split_device_spec(spec).name);
  return fmt::format("{}", fmt::join(served, " and "));
}

// --trace FILE (docs/tracing.md): the kernel's binder events, written from before the first
// request until the daemon stops. At the end, a trace still being written (--trace, or one
// binderctl started) is finished, and its counts go to stderr.
class DaemonTrace {
 public:
  explicit DaemonTrace(const std::string& path) {
    if (path.empty()) return;
    if (int error = cused::host::TraceRecorder::daemon().start(path))
      throw std::runtime_error(fmt::format("cused: --trace {}: {}", path, std::strerror(-error)));
  }
  ~DaemonTrace() {
    auto& recorder = cused::host::TraceRecorder::daemon();
    if (!recorder.running()) return;
    auto summary = recorder.stop();
    fmt::print(stderr, "cused: trace: {} events written, {} dropped\n", summary.written,
               summary.dropped);
    if (summary.dropped > 0)
      fmt::print(stderr, "cused: trace: dropped per event: {}\n",
                 cused::core::trace_event_counts_text(summary.dropped_by_event));
  }
  DaemonTrace(const DaemonTrace&) = delete;
  DaemonTrace& operator=(const DaemonTrace&) = delete;
};

// The daemon, or `cused run`: main's work, whose errors main reports.
int serve(int argc, char** argv) {
  CLI::App app{"cused: the Android/Linux binder driver as a userspace daemon (binderfs over FUSE)"};
  app.set_version_flag("--version", cused::version_text("cused", fuse_pkgversion()));
  std::string mountpoint;
  bool foreground = false;
  std::vector<std::string> devices;
  std::string link_dir;
  std::string mode = "0600";
  uid_t uid = 0;
  gid_t gid = 0;
  cused::binderfs::MountOptions mount_options;
  std::vector<std::string> cuse_specs;
  cused::cuse::SessionOptions cuse_session;
  std::string cuse_socket_dir;
  app.add_option("--mount", mountpoint,
                 "Directory to mount the binderfs look-alike on (created if missing, and then "
                 "removed at exit; refused if a running cused serves it)");
  app.add_option("--cuse", cuse_specs,
                 "Serve /dev/NAME as a character device through CUSE, NAME[:VARIANT] "
                 "(repeatable; mmap needs the LD_PRELOAD shim, " CUSED_DOC_DIR "/cuse.md)");
  app.add_option("--cuse-socket-dir", cuse_socket_dir,
                 "Directory of the CUSE devices' mmap sockets (default /run/cused)");
  app.add_flag("-f,--foreground", foreground,
               "Stay in the foreground (by default cused returns once it serves, printing the "
               "daemon's pid)");
  std::string default_variant;
  app.add_option("--device", devices,
                 "Binder device to create, NAME or NAME:SPEC with a variant (repeatable; default: "
                 "binder, hwbinder, vndbinder)");
  app.add_option("--variant", default_variant,
                 "Variant of devices that give none, e.g. alloc_lock=spin-install,pages=lazy "
                 "(" CUSED_DOC_DIR "/variants.md); default: $CUSED_VARIANT")
      // The environment too, so that a suite whose harness starts the daemon runs under any
      // design without an edit (tests/designs/run).
      ->envname("CUSED_VARIANT");
  bool list_designs = false;
  app.add_flag("--list-designs", list_designs,
               "Print the allocator designs alloc_lock= accepts, a line each: NAME, 'racy' when "
               "it loses data under reclaim on purpose (else '-'), and what it is, tab-separated");
  app.add_option("--link", link_dir,
                 "Put symlinks to the devices in this directory (e.g. /dev), removed at exit");
  app.add_option("--mode", mode, "Permissions of device nodes (octal)");
  app.add_option("--uid", uid, "Owner of device nodes");
  app.add_option("--gid", gid, "Group of device nodes");
  app.add_flag("--allow-other", mount_options.allow_other,
               "Let users other than root reach the mount (FUSE allow_other)");
  app.add_flag("--io-uring", mount_options.io_uring,
               "Serve FUSE over io_uring (Linux >= 6.14 with fuse enable_uring=1)");
  app.add_option("--io-uring-depth", mount_options.io_uring_depth, "io_uring entries per queue");
  app.add_option("--threads", mount_options.max_threads, "Maximum FUSE worker threads");
  app.add_flag("-d,--debug", mount_options.debug, "Log every FUSE request");
  bool shrinker_stress = false;
  app.add_flag("--shrinker-stress", shrinker_stress,
               "Reclaim unused buffer pages continuously (race testing)");
  std::string trace_path;
  app.add_option("--trace", trace_path,
                 "Write the kernel's binder trace events to FILE, in the text of tracefs's "
                 "`trace` file, for Perfetto (" CUSED_DOC_DIR "/tracing.md)");
  cused::run::RunOptions run_options;
  CLI::App* run = app.add_subcommand(
      "run",
      "Run PROGRAM with its binder ioctls served by the cused on --mount DIR through seccomp "
      "(started for it when DIR has none; " CUSED_DOC_DIR
      "/run.md): cused run [--mount DIR] "
      "[--servicemanager[=PROGRAM]] -- PROGRAM ARGS. SIGTERM, SIGINT and SIGHUP go on to the "
      "program; the exit status is the program's (128 + N if signal N ended it), 125 if cused "
      "run failed, 126/127 if PROGRAM cannot be run / is not found");
  run->add_option("--mount", run_options.mount,
                  "The mount to serve the program (default: a temporary one of its own)");
  run->add_option("--device", run_options.devices,
                  "Binder device of a daemon cused run starts, NAME or NAME:SPEC (repeatable)");
  run->add_option("--variant", run_options.variant, "Variant of that daemon's devices");
  std::string servicemanager;
  CLI::Option* servicemanager_flag =
      run->add_flag("--servicemanager{}", servicemanager,
                    "Start a context manager (PROGRAM, default: cused's servicemanager) on "
                    "/dev/binder, answering "
                    "before "
                    "the program, and stop it after it")
          ->option_text("[=PROGRAM]");
  run->prefix_command();  // everything from PROGRAM on is the program's
  std::string kernel_tree;
  std::vector<std::string> kernel_patches;
  CLI::App* kernel_build = app.add_subcommand(
      "kernel-build",
      "Build TREE's drivers/android/binder_alloc.c with the kernel shim into the cached object "
      "alloc_lock=kernel:TREE loads, load it once, and print it (" CUSED_DOC_DIR
      "/kernel-designs.md): cused kernel-build TREE (a path, or a name under "
      "CUSED_KERNEL_TREES such as 7.2); with --patch, the object of alloc_lock=kernel:TREE+PATCH");
  kernel_build->add_option("TREE", kernel_tree, "The kernel tree (TREE+PATCH... as well)")
      ->required();
  kernel_build->add_option("--patch", kernel_patches,
                           "A patch to apply with patch -p1 in a scratch copy of the tree "
                           "(repeatable, applied in order)");
  cused::host::DesignCheckOptions check_options;
  double check_seconds = 60;
  CLI::App* check_design = app.add_subcommand(
      "check-design",
      "Run the kernel's debug checks on TREE's binder_alloc.c (patched with each --patch, in a "
      "scratch copy) under a client-shaped, multi-threaded allocation workload with shrinker "
      "stress, and print the verdict; exit status 0 when no check fails (" CUSED_DOC_DIR
      "/kernel-designs.md)");
  check_design
      ->add_option("TREE", check_options.tree,
                   "The kernel tree (a path, or a name under "
                   "CUSED_KERNEL_TREES such as 7.2)")
      ->required();
  check_design->add_option("--patch", check_options.patches,
                           "A patch to apply with patch -p1 in the tree's top folder "
                           "(repeatable, applied in order)");
  check_design->add_option("--seconds", check_seconds, "How long the workload runs (default 60)")
      ->check(CLI::PositiveNumber);
  // `cused run [OPTIONS] -- PROGRAM ARGS...`: what follows the first "--" is the program's, left
  // out of the parse; without "--", the first word that is not an option starts it.
  int parsed_argc = argc;
  if (argc > 1 && std::string(argv[1]) == "run") {
    for (int i = 2; i < argc; ++i)
      if (std::string(argv[i]) == "--") {
        run_options.command.assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
  }
  CLI11_PARSE(app, parsed_argc, argv);
  if (list_designs) {
    for (const auto& design : cused::core::alloc::designs())
      fmt::print("{}\t{}\t{}\n", design.name, design.racy_on_purpose ? "racy" : "-",
                 design.description);
    return 0;
  }
  if (run->parsed()) {
    for (const auto& word : run->remaining()) run_options.command.push_back(word);
    run_options.daemon = std::filesystem::read_symlink("/proc/self/exe").string();
    if (servicemanager_flag->count() > 0) run_options.servicemanager = servicemanager;
    return cused::run::launch(run_options);
  }
  if (kernel_build->parsed()) return build_kernel_design(kernel_tree, kernel_patches);
  if (check_design->parsed()) {
    check_options.duration = std::chrono::milliseconds(static_cast<long>(check_seconds * 1000));
    return run_design_check(check_options);
  }
  if (mountpoint.empty() && cuse_specs.empty()) {
    fmt::print(stderr, "cused: nothing to serve: give --mount DIR and/or --cuse NAME\n");
    return 2;
  }

  // Absolute: --link makes symlinks to it, and a background daemon changes to "/".
  if (!mountpoint.empty())
    mountpoint = std::filesystem::absolute(mountpoint).lexically_normal().string();
  if (!trace_path.empty()) trace_path = std::filesystem::absolute(trace_path).string();
  cused::binderfs::FilesystemOptions fs_options;
  cused::devices::RegistryOptions registry_options;
  // alloc_lock=kernel:TREE builds and loads a kernel tree's binder_alloc.c
  // (docs/kernel-designs.md).
  cused::host::enable_kernel_designs();
  if (!apply_variants(default_variant, devices, registry_options, fs_options)) return 2;
  // Freeze deadlines and simulated install costs (core/timer.h), for every frontend's devices,
  // before the first is made.
  cused::core::Driver::shared_default()->set_timer(cused::host::ThreadTimer::shared());
  auto cuse_nodes_options =
      cuse_nodes_of(cuse_specs, registry_options.default_variant,
                    mountpoint.empty() ? std::vector<std::string>{} : fs_options.devices);
  if (!cuse_nodes_options) return 2;
  try {
    fs_options.device_attributes.mode = static_cast<mode_t>(std::stoul(mode, nullptr, 8));
  } catch (const std::exception&) {
    fmt::print(stderr, "cused: --mode {} is not an octal mode\n", mode);
    return 2;
  }
  fs_options.device_attributes.uid = uid;
  fs_options.device_attributes.gid = gid;
  mount_options.mountpoint = mountpoint;
  cuse_session.mode = fs_options.device_attributes.mode;
  cuse_session.uid = uid;
  cuse_session.gid = gid;
  if (mount_options.max_threads) cuse_session.threads = mount_options.max_threads;
  cuse_session.debug = mount_options.debug;
  for (auto& node : *cuse_nodes_options) {
    node.socket_dir = cuse_socket_dir;
    node.session = cuse_session;
  }

  // Test hook (docs/reliability.md): CUSED_INJECT_FAILURE=ENTRY:OP[:N|crash|terminate] makes
  // those requests' handlers fail.
  if (const char* inject = std::getenv("CUSED_INJECT_FAILURE")) {
    std::string error;
    if (!cused::parse_injections(inject, error)) {
      fmt::print(stderr, "cused: CUSED_INJECT_FAILURE: {}\n", error);
      return 2;
    }
  }

  // S4.12: binder's nice inheritance sets client threads' nice, as the kernel sets `current`'s.
  cused::core::Driver::shared_default()->set_thread_priorities(
      std::make_shared<cused::HostThreadPriorities>());
  std::optional<cused::MountPoint> prepared_mountpoint;
  try {
    if (!mountpoint.empty()) prepared_mountpoint.emplace(mountpoint);
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}\n", error.what());
    return 1;
  }
  std::optional<cused::Background> background;
  // Before any thread exists
  if (!foreground) background.emplace(served_text(mountpoint, cuse_specs));
  cused::FatalCleanup::install();
  cused::StopSignals stop_signals;
  try {
    DaemonTrace trace(trace_path);  // after the fork to the background: it starts a thread
    // The USDT probes fire while a tracer is attached, with or without a trace (docs/tracing.md).
    cused::host::UsdtFeed usdt_feed(cused::host::usdt_probe_attached);
    // Reclaims LRU pages of every proc on memory pressure (PSI, cgroup v2), like the kernel's
    // binder shrinker; created before the mount so that no proc exists without it.
    cused::host::ShrinkerOptions shrinker_options;
    shrinker_options.stress = shrinker_stress;
    cused::host::add_memory_pressure_sources(shrinker_options);
    cused::host::ShrinkerThread shrinker(cused::core::Driver::shared_default()->page_lru(),
                                         std::move(shrinker_options));
    registry_options.shrink_now = [&shrinker] { return shrinker.shrink_now(); };  // binderctl
    registry_options.trace = &cused::host::TraceRecorder::daemon();               // binderctl trace
    // The devices of every frontend, their variants and procs (cused/devices).
    cused::devices::DeviceRegistry registry(std::move(registry_options));
    std::vector<std::unique_ptr<cused::cuse::Node>> cuse_nodes;
    for (auto& node : *cuse_nodes_options)
      cuse_nodes.push_back(std::make_unique<cused::cuse::Node>(registry, std::move(node)));
    if (mountpoint.empty()) {
      if (background) background->ready();
      cused::notify_service_manager("READY=1");  // cused.service is Type=notify
      stop_signals.wait();
      cused::notify_service_manager("STOPPING=1");
      return 0;
    }
    cused::binderfs::Filesystem filesystem(registry, fs_options);
    cused::ForgetMountAtExit forget_mount;
    cused::binderfs::Mount mount(filesystem, mount_options);
    cused::FatalCleanup::set_mount(mountpoint);  // undone even if the daemon dies of a bug
    // A stop signal that came while the daemon started ends the loop before it serves.
    cused::StopAction stop_serving(stop_signals, [&mount] { mount.stop(); });
    // `cused run` programs attach through this daemon's run socket (docs/run.md).
    std::optional<cused::run::RunServer> run_server;
    try {
      run_server.emplace(registry, filesystem.mount_device());
    } catch (const std::exception& error) {
      fmt::print(stderr, "{} (cused run cannot attach to this daemon)\n", error.what());
    }
    std::optional<cused::DeviceLinks> links;
    if (!link_dir.empty()) links.emplace(link_dir, mountpoint, fs_options.devices);
    if (background) background->ready();
    cused::notify_service_manager("READY=1");  // the mount and the links exist
    int result = mount.serve();
    cused::notify_service_manager("STOPPING=1");
    return result == 0 ? 0 : 1;
  } catch (const std::exception& error) {
    fmt::print(stderr, "{}\n", error.what());
    if (background) background->failed();
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // First: a stop signal from here on waits for StopSignals' thread, which stops cleanly.
  cused::StopSignals::block();
  try {
    return serve(argc, argv);
  } catch (const std::exception& error) {
    fmt::print(stderr, "cused: {}\n", error.what());
  } catch (...) {
    fmt::print(stderr, "cused: stopped by an unknown error\n");
  }
  return 1;
}

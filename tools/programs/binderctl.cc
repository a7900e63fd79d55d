// SPDX-License-Identifier: GPL-2.0-only
// binderctl: devices, variants, state, stats and "shrink now" of a running cused (docs/design.md
// section 6, docs/variants.md). Speaks to the daemon through its mount: binder-control's ioctls
// (BINDER_CTL_ADD, uapi/cused.h) and the files under binder_logs/; or through one of its CUSE
// nodes, which answer uapi/cused.h's ioctls as binder-control does (docs/cuse.md).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "client/cused_mounts.h"
#include "client/program_errors.h"
#include "core/device_variant.h"
#include "core/trace_event_names.h"
#include "core/version.h"
#include "tools/programs/binderctl_control.h"
#include "tools/programs/trace_event_json.h"

namespace {

namespace fs = std::filesystem;
using cused::binderctl::ControlFile;
using cused::binderctl::Failure;

int fail(const std::string& message) {
  fmt::print(stderr, "binderctl: {}\n", message);
  return 1;
}

// A failed ioctl with the kernel's errno, and what it means here when the caller knows.
int fail(const Failure& failure, const std::string& hint = {}) {
  std::string message = fmt::format("{}: {}", failure.what, std::strerror(failure.err));
  if (failure.err == ENOTTY) message += " (this cused does not serve that request)";
  if (failure.err == EPERM) message += " (cused serves it to root and its own user only)";
  if (!hint.empty()) message += "\n  " + hint;
  return fail(message);
}

// binder-control could not be opened: EACCES/EPERM there is its owner's rule.
int fail_to_open(const Failure& failure) {
  bool denied = failure.err == EACCES || failure.err == EPERM;
  return fail(failure, denied ? "binder-control belongs to root, as in binderfs" : "");
}

// binderfs's rule for device names (S10.3): the names a VFS lookup refuses get EACCES.
bool valid_device_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

// Why the daemon refused a spec: the same parser, run here, names the bad key or value.
std::string explain_spec(const std::string& spec) {
  auto parsed = cused::core::parse_device_variant(spec);
  if (auto* error = std::get_if<cused::core::VariantSpecError>(&parsed)) {
    // A kernel design is built by the daemon, not here (docs/kernel-designs.md): only its log
    // has the compiler's or patch's words.
    if (error->message.starts_with("bad alloc_lock=kernel:"))
      return "the daemon could not build or load the kernel design: its log says why (a patch "
             "that does not apply, a file that does not compile, a tree that is not there)";
    return error->message;
  }
  return "the daemon refused it (see its log)";
}

std::optional<std::string> resolve_mount(const std::string& given, std::string& error) {
  if (!given.empty()) return given;
  auto mounts = cused::client::find_cused_mounts();
  if (mounts.size() == 1) return mounts.front();
  if (mounts.empty())
    error = "no cused mount found in /proc/mounts; give --mount DIR";
  else
    error = fmt::format("several cused mounts ({}); pick one with --mount DIR",
                        fmt::join(mounts, ", "));
  return std::nullopt;
}

// Device nodes are the mount's non-directory entries that answer CUSED_CTL_GET_VARIANT.
int list(const ControlFile& control, const std::string& mount) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(mount, error)) {
    std::string name = entry.path().filename().string();
    if (name == "binder-control" || entry.is_directory()) continue;
    auto variant = control.variant(name);
    if (auto* spec = std::get_if<std::string>(&variant))
      rows.emplace_back(name, *spec);
    else if (std::get<Failure>(variant).err != ENOENT)
      return fail(std::get<Failure>(variant));
  }
  if (error) return fail(fmt::format("read {}: {}", mount, error.message()));
  std::size_t width = 6;
  for (const auto& row : rows) width = std::max(width, row.first.size());
  fmt::print("{:<{}}  {}\n", "DEVICE", width, "VARIANT");
  for (const auto& [name, spec] : rows) fmt::print("{:<{}}  {}\n", name, width, spec);
  return 0;
}

int create(const ControlFile& control, const std::string& name_and_spec) {
  if (auto failure = control.create(name_and_spec)) {
    std::string hint;
    std::string name = cused::core::split_device_spec(name_and_spec).name;
    if (failure->err == EINVAL)
      hint = explain_spec(cused::core::split_device_spec(name_and_spec).variant);
    else if (failure->err == EACCES && !valid_device_name(name))
      hint = fmt::format(
          "'{}' is not a valid device name: binderfs refuses \"\", \".\", \"..\" and names with "
          "'/'",
          name);
    else if (failure->err == EEXIST)
      hint = "a device of that name exists; change its variant with `binderctl set`";
    return fail(*failure, hint);
  }
  // The answer echoes what was sent, as binderfs does: "NAME:SPEC" here.
  std::string name = cused::core::split_device_spec(name_and_spec).name;
  auto variant = control.variant(name);
  if (auto* failure = std::get_if<Failure>(&variant)) return fail(*failure);
  fmt::print("{}  {}\n", name, std::get<std::string>(variant));
  return 0;
}

int set(const ControlFile& control, const std::string& name, const std::string& spec) {
  auto variant = control.set_variant(name, spec);
  if (auto* failure = std::get_if<Failure>(&variant)) {
    std::string hint;
    if (failure->err == EINVAL) hint = explain_spec(spec);
    if (failure->err == ENOENT) hint = "no such device; `binderctl list` shows them";
    return fail(*failure, hint);
  }
  fmt::print("{}  {}  (procs opened from now on; open ones keep theirs)\n", name,
             std::get<std::string>(variant));
  return 0;
}

int show(const ControlFile& control, const std::string& name) {
  auto variant = control.variant(name);
  if (auto* failure = std::get_if<Failure>(&variant))
    return fail(*failure, failure->err == ENOENT ? "no such device" : "");
  fmt::print("{}\n", std::get<std::string>(variant));
  return 0;
}

int shrink(const ControlFile& control) {
  auto result = control.shrink();
  if (auto* failure = std::get_if<Failure>(&result)) return fail(*failure);
  const auto& freed = std::get<cused::uapi::cused_shrink_result>(result);
  fmt::print("freed {} pages ({} bytes), skipped {} busy\n", freed.pages, freed.bytes,
             freed.skipped);
  return 0;
}

int export_json(const std::string& file);

// Starts the daemon's trace into `file`, or stops it and prints what it held, per event what it
// dropped, and writes its JSON.
int trace(const ControlFile& control, bool start, const std::string& file) {
  std::string path = start ? std::filesystem::absolute(file).string() : std::string();
  auto result = control.trace(path);
  if (auto* failure = std::get_if<Failure>(&result)) {
    const char* why = failure->err == EBUSY              ? "a trace is being written already"
                      : failure->err == ENOENT && !start ? "no trace is being written"
                                                         : "";
    return fail(*failure, why);
  }
  const auto& done = std::get<cused::uapi::cused_trace>(result);
  if (start) {
    fmt::print("tracing to {}\n", path);
    return 0;
  }
  fmt::print("{} events written, {} dropped\n", done.written, done.dropped);
  if (done.dropped > 0)
    fmt::print("dropped per event: {}\n",
               cused::core::trace_event_counts_text(std::vector<std::uint64_t>(
                   std::begin(done.dropped_by_event), std::end(done.dropped_by_event))));
  // A daemon before the path was returned leaves it empty: there is no file to export then.
  const std::string written(done.path, strnlen(done.path, sizeof done.path));
  return written.empty() ? 0 : export_json(written);
}

// `trace export FILE`, and every `trace stop`: FILE's Trace Event Format, beside it.
int export_json(const std::string& file) {
  const std::string json = cused::tools::trace_json_path(file);
  auto counts = cused::tools::write_trace_event_json(file, json);
  fmt::print(
      "{}: {} calls, {} one-way, {} lock waits, {} lock holds (Trace Event Format: Perfetto UI, "
      "chrome://tracing)\n",
      json, counts.calls, counts.one_way, counts.lock_waits, counts.lock_holds);
  return 0;
}

// binder_logs/state or binder_logs/stats, as the daemon writes them.
int print_log(const std::string& mount, const std::string& file) {
  std::string path = mount + "/binder_logs/" + file;
  std::ifstream in(path);
  if (!in) {
    int err = errno;
    return fail(fmt::format("cannot read {}: {}{}", path, std::strerror(err),
                            err == ENOENT ? " (this cused serves no binder_logs/)" : ""));
  }
  std::cout << in.rdbuf();
  return 0;
}

// main, behind guarded_main: whatever it throws is one line and exit code 1.
int run(int argc, char** argv) {
  CLI::App app{"binderctl: devices, variants, state, stats, shrink and trace of a running cused"};
  app.set_version_flag("--version", cused::version_text("binderctl", nullptr));
  app.require_subcommand(1);
  app.fallthrough();  // --mount also after the command: `binderctl list --mount DIR`
  std::string mount_option;
  app.add_option("--mount", mount_option,
                 "cused's mount (default: the one cused mount in /proc/mounts)");
  std::string name, spec;
  auto* list_cmd = app.add_subcommand("list", "Devices and their variants");
  auto* create_cmd = app.add_subcommand("create", "Create a device: NAME or NAME:SPEC");
  create_cmd->add_option("device", name, "NAME[:SPEC]")->required();
  auto* set_cmd = app.add_subcommand("set", "Change a device's variant for procs opened from now");
  set_cmd->add_option("name", name, "Device")->required();
  set_cmd->add_option("spec", spec, "Variant keys to change, e.g. alloc_lock=spin")->required();
  auto* show_cmd = app.add_subcommand("show", "Print a device's variant");
  show_cmd->add_option("name", name, "Device")->required();
  auto* shrink_cmd = app.add_subcommand("shrink", "Reclaim every unused buffer page now");
  auto* trace_cmd = app.add_subcommand(
      "trace", "Write the binder trace events to FILE (start FILE), or stop (docs/tracing.md)");
  trace_cmd->require_subcommand(1);
  auto* trace_start = trace_cmd->add_subcommand("start", "Start writing the trace to FILE");
  std::string trace_file;
  trace_start->add_option("file", trace_file, "FILE (created, or truncated)")->required();
  auto* trace_stop = trace_cmd->add_subcommand(
      "stop", "Stop, print what the trace held and write it as FILE.json (Trace Event Format)");
  auto* trace_export = trace_cmd->add_subcommand(
      "export", "Write a trace FILE (cused --trace's too) as FILE.json, the Trace Event Format");
  trace_export->add_option("file", trace_file, "FILE")->required()->check(CLI::ExistingFile);
  auto* state_cmd = app.add_subcommand("state", "Print binder_logs/state");
  auto* stats_cmd = app.add_subcommand("stats", "Print binder_logs/stats");
  std::string cuse_node;
  app.add_option("--cuse", cuse_node,
                 "Send set, show, shrink and trace through this CUSE node of the daemon "
                 "(/dev/NAME) instead of a mount's binder-control; `set /dev/NAME SPEC` and "
                 "`show /dev/NAME` imply it");
  CLI11_PARSE(app, argc, argv);

  if (trace_export->parsed()) return export_json(trace_file);  // needs no daemon
  // A device given as a path is a CUSE node: requests go through it, about its own device.
  if ((set_cmd->parsed() || show_cmd->parsed()) && name.find('/') != std::string::npos) {
    cuse_node = name;
    name = fs::weakly_canonical(name).filename().string();  // /dev/binder -> /dev/binder-cuse
  }
  // What binder-control and a CUSE node both serve.
  auto variant_shrink_trace = [&](const ControlFile& control) {
    if (set_cmd->parsed()) return set(control, name, spec);
    if (show_cmd->parsed()) return show(control, name);
    if (shrink_cmd->parsed()) return shrink(control);
    if (trace_start->parsed()) return trace(control, true, trace_file);
    if (trace_stop->parsed()) return trace(control, false, "");
    return fail("no command");
  };
  const bool needs_mount =
      list_cmd->parsed() || create_cmd->parsed() || state_cmd->parsed() || stats_cmd->parsed();
  if (!cuse_node.empty() && !needs_mount) {
    // A mount's device node answers binder's ioctls only; its variant is binder-control's.
    std::error_code error;
    if (fs::exists(cuse_node, error) && !fs::is_character_file(cuse_node, error))
      return fail(fmt::format(
          "{} is not a CUSE node (a character device); a mount's devices are reached through its "
          "binder-control, by name: binderctl --mount DIR set NAME SPEC",
          cuse_node));
    ControlFile control(ControlFile::CuseNode{cuse_node});
    if (!control.ok()) return fail(control.failure());
    return variant_shrink_trace(control);
  }

  std::string error;
  auto mount = resolve_mount(mount_option, error);
  if (!mount) return fail(error);
  if (state_cmd->parsed()) return print_log(*mount, "state");
  if (stats_cmd->parsed()) return print_log(*mount, "stats");
  ControlFile control(*mount);
  if (!control.ok()) return fail_to_open(control.failure());
  if (list_cmd->parsed()) return list(control, *mount);
  if (create_cmd->parsed()) return create(control, name);
  return variant_shrink_trace(control);
}

}  // namespace

int main(int argc, char** argv) {
  return cused::client::guarded_main(argv[0], [&] { return run(argc, argv); });
}

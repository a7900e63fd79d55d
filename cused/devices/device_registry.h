// SPDX-License-Identifier: GPL-2.0-only
// The daemon's binder devices, their variants and their open procs, in one object that every
// frontend serves (docs/design.md section 5): binderfs shows the devices it serves as nodes of its
// root, the CUSE frontend serves each of its own as /dev/NAME, and `cused run` finds here which
// proc a program's descriptor names. Read and change a variant, shrink now and trace go through
// it too (control_requests.h), whichever node the request came in on: binder-control, or a CUSE
// node.
//
// Device names are one namespace for the whole daemon, so that a name given to binderctl means
// one device. A device taken out of it (S10.4's unlink, a rename's replaced target, a CUSE node
// that goes) lives on for the procs that have it open, as in binderfs.
//
// Locks: devices_lock_ guards the devices (the kernel's binder_devices list and binderfs's
// directory), opens_lock_ the open procs (binder_procs and its binder_procs_lock), and
// observer_lock_ the close observer; none is taken while another is held.
// variant_change_lock_ serializes variant changes and is taken before a device's own options lock
// (core::Device::options_lock_).
#pragma once

#include <sys/types.h>

#include <compare>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/alloc/page_lru.h"
#include "core/device.h"
#include "core/device_options.h"
#include "core/proc.h"
#include "core/sync/mutex.h"
#include "cused/host/trace_recorder.h"

namespace cused::devices {

// The frontend whose node a device is: an entry in binderfs's root, or /dev/NAME through CUSE.
enum class Frontend { kBinderfs, kCuse };

// A device's number in its registry: given in order of creation from 0, never reused, so that a
// removed device's number names nothing else (binderfs's listing inodes and BINDER_CTL_ADD's
// minor are made from it).
using DeviceId = std::size_t;

struct RegistryOptions {
  // The variant `--variant` gives: what a device created without a spec gets, and the base a
  // spec at creation is applied to (docs/variants.md).
  core::DeviceOptions default_variant{};
  // "Shrink now" (the daemon's shrinker); without it CUSED_CTL_SHRINK is ENOTTY.
  std::function<core::alloc::ReclaimResult()> shrink_now{};
  // The trace CUSED_CTL_TRACE starts and stops (the daemon's); without it the ioctl is ENOTTY.
  host::TraceRecorder* trace = nullptr;
  // S10.1: the most devices one frontend serves at once (binderfs's default and upper bound).
  std::size_t max_devices = 1u << 20;
};

// What stat() shows of a client's descriptor (device number, inode), for opens whose file is
// theirs alone: each open of a binderfs node has an inode of its own.
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  auto operator<=>(const FileIdentity&) const = default;
};

// The proc behind one open, and its O_NONBLOCK at open.
struct OpenProc {
  std::shared_ptr<core::Proc> proc;
  bool nonblock = false;
};

class DeviceRegistry {
 public:
  explicit DeviceRegistry(RegistryOptions options = {});
  DeviceRegistry(const DeviceRegistry&) = delete;
  DeviceRegistry& operator=(const DeviceRegistry&) = delete;

  // --- Devices ---
  struct Added {
    int error = 0;  // 0, or what BINDER_CTL_ADD answers (S10.3)
    DeviceId id = 0;
  };
  // A new device `name` with `variant`, served by `frontend`. S10.3's errors: EACCES for a name a
  // file system refuses ("", ".", "..", one with '/'), ENOSPC when `frontend` serves
  // max_devices already, EEXIST when a device of any frontend has the name.
  Added add_device(const std::string& name, const core::DeviceOptions& variant, Frontend frontend)
      CUSED_EXCLUDES(devices_lock_);
  // Takes device `id` out of the namespace (its frontend stops serving it); its open procs keep it.
  void remove_device(DeviceId id) CUSED_EXCLUDES(devices_lock_);
  // S10.4's unlink of `name` among `frontend`'s devices: 0, or -ENOENT.
  int unlink(const std::string& name, Frontend frontend) CUSED_EXCLUDES(devices_lock_);
  // S10.4's rename of `frontend`'s device `from` to `to`, with rename(2)'s RENAME_NOREPLACE and
  // RENAME_EXCHANGE: 0, -ENOENT (no `from`; no `to` to exchange with), -EEXIST (NOREPLACE and
  // `to` exists, or another frontend's device has the name: names are the daemon's, not one
  // frontend's). A replaced `to` leaves the namespace and lives on for its procs.
  int rename(const std::string& from, const std::string& to, unsigned flags, Frontend frontend)
      CUSED_EXCLUDES(devices_lock_);

  // The device called `name` (of any frontend), or null.
  std::shared_ptr<core::Device> device(const std::string& name) const CUSED_EXCLUDES(devices_lock_);
  // Device `id` even after it left the namespace (an inode looked up before an unlink can still
  // be opened), or null for a number never given.
  std::shared_ptr<core::Device> device(DeviceId id) const CUSED_EXCLUDES(devices_lock_);
  // The number of `frontend`'s device called `name`.
  std::optional<DeviceId> find(const std::string& name, Frontend frontend) const
      CUSED_EXCLUDES(devices_lock_);
  // The frontend device `id` was created for; nullopt for a number never given.
  std::optional<Frontend> frontend_of(DeviceId id) const CUSED_EXCLUDES(devices_lock_);
  struct Named {
    DeviceId id;
    std::string name;
  };
  // `frontend`'s devices in the namespace, in order of creation.
  std::vector<Named> devices_of(Frontend frontend) const CUSED_EXCLUDES(devices_lock_);
  // Every device in the namespace, of every frontend (binder_logs/stats names their variants).
  std::vector<std::shared_ptr<core::Device>> live_devices() const CUSED_EXCLUDES(devices_lock_);

  // --- Variants (docs/design.md section 5) ---
  const core::DeviceOptions& default_variant() const { return options_.default_variant; }
  // The variant procs opened on `name` from now on get; nullopt: no such device.
  std::optional<core::DeviceOptions> variant(const std::string& name) const;
  struct VariantChange {
    int error = 0;  // 0, ENOENT (no such device) or EINVAL (a bad spec: `refusal` says why)
    core::DeviceOptions variant{};  // the device's variant now, every key
    std::string refusal{};
  };
  // Applies `spec` to the current variant of `name`: procs opened from now on get the result,
  // procs already open keep theirs. Changes are serialized, so that two at once both keep their
  // keys.
  VariantChange set_variant(const std::string& name, const std::string& spec)
      CUSED_EXCLUDES(variant_change_lock_);

  // --- Shrink and trace ---
  // What reclaiming every unused page now freed; nullopt when the daemon has no shrinker.
  std::optional<core::alloc::ReclaimResult> shrink_now() const;
  // The daemon's trace, or null when it has none.
  host::TraceRecorder* trace() const { return options_.trace; }

  // --- Open procs ---
  // Records an open of a device: its proc and O_NONBLOCK, and its file's identity when no other
  // open shares that file.
  void add_open(std::shared_ptr<core::Proc> proc, bool nonblock,
                std::optional<FileIdentity> file = std::nullopt) CUSED_EXCLUDES(opens_lock_);
  // The open of `proc` is released: forgotten, and the close observer told.
  void remove_open(const core::Proc& proc) CUSED_EXCLUDES(opens_lock_, observer_lock_);
  // One descriptor of the open of `proc` was closed (FUSE flush): the close observer is told.
  void descriptor_closed(const core::Proc& proc) const CUSED_EXCLUDES(observer_lock_);
  // Called with the proc whenever a descriptor of an open is closed or the open released: `cused
  // run` forgets which descriptor named which proc. Empty: nobody is told.
  void set_close_observer(std::function<void(const core::Proc&)> observer)
      CUSED_EXCLUDES(observer_lock_);

  // The open whose file is `file`; no proc if none is open.
  OpenProc open_of(const FileIdentity& file) const CUSED_EXCLUDES(opens_lock_);
  // The procs thread group `tgid` has open, on any device.
  std::vector<std::shared_ptr<core::Proc>> procs_of(pid_t tgid) const CUSED_EXCLUDES(opens_lock_);
  // Calls `visit` for every open proc of thread group `tgid` (tests poke at a proc's memfd).
  void for_each_proc_of(pid_t tgid, const std::function<void(core::Proc&)>& visit) const
      CUSED_EXCLUDES(opens_lock_);
  // Open procs now, of every frontend; for tests, stats and leak checks.
  std::size_t open_procs() const CUSED_EXCLUDES(opens_lock_);

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<core::Device> device;
    Frontend frontend;
    bool removed = false;  // out of the namespace, alive for its open procs
  };
  struct Open {
    std::shared_ptr<core::Proc> proc;
    bool nonblock;
    std::optional<FileIdentity> file;
  };

  std::optional<DeviceId> find_locked(const std::string& name) const CUSED_REQUIRES(devices_lock_);
  std::size_t served_by(Frontend frontend) const CUSED_REQUIRES(devices_lock_);
  void tell_observer(const core::Proc& proc) const CUSED_EXCLUDES(observer_lock_);

  const RegistryOptions options_;
  mutable sync::Mutex devices_lock_;
  std::vector<Entry> devices_ CUSED_GUARDED_BY(devices_lock_);  // indexed by DeviceId
  mutable sync::Mutex variant_change_lock_;
  mutable sync::Mutex opens_lock_;
  std::map<const core::Proc*, Open> opens_ CUSED_GUARDED_BY(opens_lock_);
  // The open each file identity names; an open of the same file made later takes it over.
  std::map<FileIdentity, const core::Proc*> opens_by_file_ CUSED_GUARDED_BY(opens_lock_);
  mutable sync::Mutex observer_lock_;
  std::function<void(const core::Proc&)> close_observer_ CUSED_GUARDED_BY(observer_lock_);
};

}  // namespace cused::devices

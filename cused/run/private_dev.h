// SPDX-License-Identifier: GPL-2.0-only
// The program's own /dev under `cused run` (docs/run.md): in a private mount namespace, /dev
// becomes an overlay of the host's /dev (with its submounts: pts, shm, mqueue, ...) in which
// /dev/NAME is a symlink to the mount's node NAME for every binder device of the mount, and
// /dev/binderfs a symlink to the mount itself (libbinder reads /dev/binderfs/features/). Programs
// that hard-code /dev/binder need nothing else, nothing changes on the host, and two programs can
// run against two daemons at once. (A bind mount of a node would pin one inode, and every open of
// a device node must get an inode of its own: docs/binderfs.md.)
#pragma once

#include <string>
#include <vector>

namespace cused::run {

// In the calling process, which must have its own mount namespace already (unshare(CLONE_NEWNS)
// and mounts made slaves): /dev/NAME -> MOUNT/NAME for each of `names`, /dev/binderfs -> MOUNT.
// Returns 0, or -errno with `error` saying which step failed.
int make_private_dev(const std::string& mount, const std::vector<std::string>& names,
                     std::string& error);

}  // namespace cused::run

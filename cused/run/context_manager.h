// SPDX-License-Identifier: GPL-2.0-only
// `cused run --servicemanager`: which program serves as the context manager, and whether one
// answers on a device (libbinder's ping of handle 0, sent by the launcher through the mount's
// node: FUSE-path and `cused run` processes are procs of the same device).
#pragma once

#include <string>

namespace cused::run {

// The servicemanager next to the cused binary `daemon`: in the build tree
// (build/cused/cused -> build/tools/servicemanager) or installed (sbin/cused ->
// bin/servicemanager); else "servicemanager", looked up in PATH.
std::string default_servicemanager(const std::string& daemon);

// Whether a context manager answers a ping on binder node `node` (false also when the node
// cannot be opened).
bool context_manager_answers(const std::string& node);

}  // namespace cused::run

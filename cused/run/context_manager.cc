// SPDX-License-Identifier: GPL-2.0-only
#include "cused/run/context_manager.h"

#include <unistd.h>

#include <exception>
#include <filesystem>

#include "client/binder_process.h"
#include "client/ipc_thread.h"
#include "client/service_manager.h"

namespace cused::run {

std::string default_servicemanager(const std::string& daemon) {
  std::filesystem::path dir = std::filesystem::path(daemon).parent_path();
  for (const auto& candidate : {dir / "../tools/servicemanager", dir / "../bin/servicemanager"})
    if (access(candidate.c_str(), X_OK) == 0) return candidate.lexically_normal().string();
  return "servicemanager";
}

bool context_manager_answers(const std::string& node) {
  try {
    client::ProcessOptions options;
    options.device = node;
    options.max_threads = 0;
    client::BinderProcess process(options);
    client::IpcThread thread(process);
    return client::ServiceManagerProxy(thread).ping() == client::kOk;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace cused::run

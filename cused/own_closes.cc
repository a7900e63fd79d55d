// SPDX-License-Identifier: GPL-2.0-only
#include "cused/own_closes.h"

#include <unistd.h>

#include <mutex>
#include <set>

namespace cused {

namespace {

std::mutex g_lock;
std::multiset<pid_t>& closing_tids() {
  static std::multiset<pid_t> tids;
  return tids;
}

}  // namespace

OwnClose::OwnClose() {
  std::lock_guard guard(g_lock);
  closing_tids().insert(gettid());
}

OwnClose::~OwnClose() {
  std::lock_guard guard(g_lock);
  auto& tids = closing_tids();
  if (auto it = tids.find(gettid()); it != tids.end()) tids.erase(it);
}

bool OwnClose::closing(pid_t tid) {
  std::lock_guard guard(g_lock);
  return closing_tids().contains(tid);
}

}  // namespace cused

// SPDX-License-Identifier: GPL-2.0-only
#include "core/work.h"

#include <cassert>

namespace cused::core {

WorkList::~WorkList() {
  while (pop_front()) {
  }
}

void WorkList::push_back(Work& work) {
  assert(!work.queued());
  work.pin_ = work.owner();
  list_.push_back(work);
}

DequeuedWork WorkList::pop_front() {
  if (list_.empty()) return {};
  return unlink(list_.front());
}

DequeuedWork WorkList::unlink(Work& work) {
  if (!work.queued()) return {};
  work.unlink();
  return {&work, std::exchange(work.pin_, nullptr)};
}

}  // namespace cused::core

#include "core/node.h"

namespace cused::core {

std::shared_ptr<void> NodeWork::owner() { return node.shared_from_this(); }

Node::Node(int debug_id, std::shared_ptr<Proc> owner, const flat_binder_object* fp,
           sync::LockPolicy lock_policy)
    : debug_id(debug_id),
      ptr(fp ? fp->binder : 0),
      cookie(fp ? fp->cookie : 0),
      min_priority(fp ? static_cast<int>(fp->flags & FLAT_BINDER_FLAG_PRIORITY_MASK) : 0),
      accept_fds(fp && (fp->flags & FLAT_BINDER_FLAG_ACCEPTS_FDS)),
      txn_security_ctx(fp && (fp->flags & FLAT_BINDER_FLAG_TXN_SECURITY_CTX)),
      lock(lock_policy),
      proc(std::move(owner)) {}

Node::~Node() = default;

}  // namespace cused::core

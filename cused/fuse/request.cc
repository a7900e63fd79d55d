// SPDX-License-Identifier: GPL-2.0-only
#include "cused/fuse/request.h"

namespace cused::fuse {

namespace {
thread_local RequestScope* current = nullptr;
}  // namespace

RequestScope::RequestScope(fuse_req_t req) : req_(req), outer_(current) { current = this; }

RequestScope::~RequestScope() { current = outer_; }

void RequestScope::mark_answered(fuse_req_t req) {
  for (RequestScope* scope = current; scope; scope = scope->outer_)
    if (scope->req_ == req) scope->answered_ = true;
}

int reply_err(fuse_req_t req, int err) {
  RequestScope::mark_answered(req);
  return fuse_reply_err(req, err);
}

void reply_none(fuse_req_t req) {
  RequestScope::mark_answered(req);
  fuse_reply_none(req);
}

int reply_entry(fuse_req_t req, const fuse_entry_param* entry) {
  RequestScope::mark_answered(req);
  return fuse_reply_entry(req, entry);
}

int reply_attr(fuse_req_t req, const struct stat* attr, double timeout) {
  RequestScope::mark_answered(req);
  return fuse_reply_attr(req, attr, timeout);
}

int reply_open(fuse_req_t req, const fuse_file_info* fi) {
  RequestScope::mark_answered(req);
  return fuse_reply_open(req, fi);
}

int reply_buf(fuse_req_t req, const char* buf, std::size_t size) {
  RequestScope::mark_answered(req);
  return fuse_reply_buf(req, buf, size);
}

int reply_ioctl(fuse_req_t req, int result, const void* buf, std::size_t size) {
  RequestScope::mark_answered(req);
  return fuse_reply_ioctl(req, result, buf, size);
}

int reply_poll(fuse_req_t req, unsigned revents) {
  RequestScope::mark_answered(req);
  return fuse_reply_poll(req, revents);
}

}  // namespace cused::fuse

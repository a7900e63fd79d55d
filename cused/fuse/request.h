// SPDX-License-Identifier: GPL-2.0-only
// One libfuse request being handled (binderfs and CUSE): its handler runs guarded
// (cused/request/failures.h), and every answer goes through the reply functions here, which
// record that the request handled on this thread has been answered. So when a handler throws,
// the guard knows whether its request still needs an answer: answering twice would touch a
// request libfuse has freed, not answering leaves the caller blocked in its system call forever.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string_view>
#include <utility>

#include "cused/fuse/fuse.h"
#include "cused/request/failures.h"

namespace cused::fuse {

// The request the current thread's handler serves, while it is unanswered.
class RequestScope {
 public:
  explicit RequestScope(fuse_req_t req);
  ~RequestScope();
  RequestScope(const RequestScope&) = delete;
  RequestScope& operator=(const RequestScope&) = delete;

  bool answered() const { return answered_; }
  // `req` is answered, or handed to an object that will answer it (an ioctl's completion): if it
  // is the current thread's handler's request, the handler's guard must not answer it again.
  static void mark_answered(fuse_req_t req);

 private:
  fuse_req_t req_;
  bool answered_ = false;
  RequestScope* outer_;
};

// How a failed handler answers: with the errno, or (FORGET, which takes no answer) with none.
enum class FailWith { kErrno, kNone };

// Runs `body` as the handler of `req`; an exception from it fails `req` if it was not answered.
template <typename Body>
void serve(fuse_req_t req, RequestEntry entry, std::string_view op, Body&& body,
           FailWith fail_with = FailWith::kErrno) noexcept {
  RequestScope scope(req);
  run_guarded(entry, op, std::forward<Body>(body), [&](int err) {
    if (scope.answered()) return;
    if (fail_with == FailWith::kNone) {
      fuse_reply_none(req);
    } else {
      fuse_reply_err(req, err);
    }
  });
}

// libfuse's answers, recorded (RequestScope::mark_answered) before the request is freed.
int reply_err(fuse_req_t req, int err);
void reply_none(fuse_req_t req);
int reply_entry(fuse_req_t req, const fuse_entry_param* entry);
int reply_attr(fuse_req_t req, const struct stat* attr, double timeout);
int reply_open(fuse_req_t req, const fuse_file_info* fi);
int reply_buf(fuse_req_t req, const char* buf, std::size_t size);
int reply_ioctl(fuse_req_t req, int result, const void* buf, std::size_t size);
int reply_poll(fuse_req_t req, unsigned revents);

}  // namespace cused::fuse

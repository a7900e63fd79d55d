// SPDX-License-Identifier: GPL-2.0-only
#include "client/ipc_thread.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace cused::client {

namespace {

template <typename T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

Parcel adopt_buffer(const binder_transaction_data& txn, IpcThread& thread) {
  const auto* data = reinterpret_cast<const std::byte*>(txn.data.ptr.buffer);
  const auto* offsets = reinterpret_cast<const binder_size_t*>(txn.data.ptr.offsets);
  return Parcel::adopt({data, txn.data_size}, {offsets, txn.offsets_size / sizeof(binder_size_t)},
                       [&thread](binder_uintptr_t buffer) { thread.free_buffer(buffer); });
}

thread_local IpcThread* current_thread = nullptr;

}  // namespace

IpcThread::IpcThread(BinderProcess& process)
    : process_(process), previous_current_(std::exchange(current_thread, this)) {
  out_.reserve(256);
}

IpcThread* IpcThread::current() { return current_thread; }

IpcThread::~IpcThread() {
  current_thread = previous_current_;
  pending_reply_.reset();
  flush();
  std::int32_t unused = 0;
  process_.device().ioctl(BINDER_THREAD_EXIT, &unused);
}

template <typename T>
void IpcThread::queue(std::uint32_t cmd, const T& payload) {
  std::size_t at = out_.size();
  out_.resize(at + sizeof cmd + sizeof payload);
  std::memcpy(out_.data() + at, &cmd, sizeof cmd);
  std::memcpy(out_.data() + at + sizeof cmd, &payload, sizeof payload);
}

void IpcThread::queue(std::uint32_t cmd) {
  std::size_t at = out_.size();
  out_.resize(at + sizeof cmd);
  std::memcpy(out_.data() + at, &cmd, sizeof cmd);
}

void IpcThread::queue_handle_command(std::uint32_t cmd, std::uint32_t handle) {
  queue(cmd, handle);
}

void IpcThread::request_death_notification(std::uint32_t handle, binder_uintptr_t cookie) {
  queue(BC_REQUEST_DEATH_NOTIFICATION, binder_handle_cookie{handle, cookie});
}

void IpcThread::clear_death_notification(std::uint32_t handle, binder_uintptr_t cookie) {
  queue(BC_CLEAR_DEATH_NOTIFICATION, binder_handle_cookie{handle, cookie});
}

void IpcThread::free_buffer(binder_uintptr_t buffer) { queue(BC_FREE_BUFFER, buffer); }

int IpcThread::flush() { return out_.empty() ? 0 : talk(false); }

int IpcThread::talk(bool receive) {
  binder_write_read bwr{};
  bwr.write_buffer = reinterpret_cast<binder_uintptr_t>(out_.data());
  bwr.write_size = out_.size();
  if (receive) {
    bwr.read_buffer = reinterpret_cast<binder_uintptr_t>(in_.data());
    bwr.read_size = in_.size();
  }
  int result;
  // An interrupted call resumes where it stopped: the driver updated write_consumed.
  do result = process_.write_read(bwr);
  while (result == -EINTR);
  out_.erase(out_.begin(), out_.begin() + static_cast<std::ptrdiff_t>(bwr.write_consumed));
  if (out_.empty()) pending_reply_.reset();
  if (receive) {
    in_size_ = bwr.read_consumed;
    in_pos_ = 0;
  }
  return result < 0 ? result : 0;
}

int IpcThread::next_command(std::uint32_t& cmd, const std::byte*& payload) {
  while (in_pos_ >= in_size_) {
    int result = talk(true);
    if (result < 0) return result;
  }
  if (in_size_ - in_pos_ < sizeof cmd) return -EPROTO;
  cmd = load<std::uint32_t>(in_.data() + in_pos_);
  std::size_t size = _IOC_SIZE(cmd);
  if (in_size_ - in_pos_ - sizeof cmd < size) return -EPROTO;
  payload = in_.data() + in_pos_ + sizeof cmd;
  in_pos_ += sizeof cmd + size;
  return 0;
}

std::int32_t IpcThread::transact(std::uint32_t handle, std::uint32_t code, const Parcel& data,
                                 Parcel* reply, std::uint32_t flags) {
  binder_transaction_data txn{};
  txn.target.handle = handle;
  txn.code = code;
  txn.flags = flags | TF_ACCEPT_FDS;
  txn.data_size = data.data().size();
  txn.offsets_size = data.offsets().size() * sizeof(binder_size_t);
  txn.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(data.data().data());
  txn.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(data.offsets().data());
  queue(BC_TRANSACTION, txn);
  if (reply) reply->reset();
  bool one_way = flags & TF_ONE_WAY;
  for (;;) {
    std::uint32_t cmd;
    const std::byte* payload;
    if (int result = next_command(cmd, payload); result < 0) return result;
    switch (cmd) {
      case BR_TRANSACTION_COMPLETE:
        if (deferred_completes_ > 0)
          --deferred_completes_;
        else if (one_way)
          return kOk;
        break;
      case BR_DEAD_REPLY:
        return kDeadObject;
      case BR_FAILED_REPLY:
      case BR_FROZEN_REPLY:
        return kFailedTransaction;
      case BR_REPLY: {
        auto answer = load<binder_transaction_data>(payload);
        Parcel buffer = adopt_buffer(answer, *this);
        if (answer.flags & TF_STATUS_CODE) return buffer.read_int32().value_or(kFailedTransaction);
        if (reply) *reply = std::move(buffer);
        return kOk;
      }
      default:
        if (int result = execute(cmd, payload); result < 0) return result;
    }
  }
}

int IpcThread::execute(std::uint32_t cmd, const std::byte* payload) {
  switch (cmd) {
    case BR_NOOP:
    case BR_OK:
    case BR_CLEAR_DEATH_NOTIFICATION_DONE:
    case BR_RELEASE:  // this library never deletes a local object: nothing to drop
    case BR_DECREFS:
    case BR_DEAD_REPLY:
    case BR_FAILED_REPLY:
    case BR_ONEWAY_SPAM_SUSPECT:
      return 0;
    case BR_TRANSACTION_COMPLETE:
      if (deferred_completes_ > 0) --deferred_completes_;
      return 0;
    case BR_ERROR:
      return load<std::int32_t>(payload);
    case BR_INCREFS:
      queue(BC_INCREFS_DONE, load<binder_ptr_cookie>(payload));
      return 0;
    case BR_ACQUIRE:
      queue(BC_ACQUIRE_DONE, load<binder_ptr_cookie>(payload));
      return 0;
    case BR_TRANSACTION:
      serve(load<binder_transaction_data>(payload));
      return 0;
    case BR_TRANSACTION_SEC_CTX:
      serve(load<binder_transaction_data_secctx>(payload).transaction_data);
      return 0;
    case BR_REPLY:  // nobody waits for it here: give the buffer back
      free_buffer(load<binder_transaction_data>(payload).data.ptr.buffer);
      return 0;
    case BR_DEAD_BINDER: {
      auto cookie = load<binder_uintptr_t>(payload);
      process_.notify_death(cookie);
      queue(BC_DEAD_BINDER_DONE, cookie);
      return 0;
    }
    case BR_SPAWN_LOOPER:
      process_.spawn_pooled_thread(false);
      return 0;
    case BR_FINISHED:
      return -ETIMEDOUT;
    default:
      return 0;  // newer notifications (freeze, ...) that this library does not ask for
  }
}

void IpcThread::serve(const binder_transaction_data& txn) {
  // A deferred reply still queued must reach the driver before this transaction's reply.
  if (!out_.empty() && deferred_completes_ > 0) flush();
  IncomingTransaction incoming;
  incoming.target = txn.target.ptr;
  incoming.cookie = txn.cookie;
  incoming.code = txn.code;
  incoming.flags = txn.flags;
  incoming.sender_pid = txn.sender_pid;
  incoming.sender_euid = txn.sender_euid;
  incoming.data = adopt_buffer(txn, *this);
  Parcel reply;
  const TransactionHandler* handler = process_.handler_for(txn.target.ptr, txn.cookie);
  std::int32_t status = handler && *handler ? (*handler)(incoming, reply) : kUnknownTransaction;
  incoming.data.reset();  // BC_FREE_BUFFER goes out with the reply
  if (txn.flags & TF_ONE_WAY) return;
  queue_reply(reply, status);
  if (process_.options().defer_complete) {
    // The next read carries the reply and waits for work; the completion comes with that work.
    pending_reply_ = std::move(reply);
    ++deferred_completes_;
    return;
  }
  wait_for_transaction_complete();
}

void IpcThread::queue_reply(const Parcel& reply, std::int32_t status) {
  binder_transaction_data txn{};
  if (process_.options().defer_complete) txn.flags |= uapi::TF_DEFER_COMPLETE;
  if (status != kOk) {
    pending_status_ = status;
    txn.flags |= TF_STATUS_CODE;
    txn.data_size = sizeof pending_status_;
    txn.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(&pending_status_);
  } else {
    txn.data_size = reply.data().size();
    txn.offsets_size = reply.offsets().size() * sizeof(binder_size_t);
    txn.data.ptr.buffer = reinterpret_cast<binder_uintptr_t>(reply.data().data());
    txn.data.ptr.offsets = reinterpret_cast<binder_uintptr_t>(reply.offsets().data());
  }
  queue(BC_REPLY, txn);
}

// The legacy flow: the reply's ioctl returns with BR_TRANSACTION_COMPLETE, and the looper
// spends another ioctl to go back to waiting.
int IpcThread::wait_for_transaction_complete() {
  for (;;) {
    std::uint32_t cmd;
    const std::byte* payload;
    if (int result = next_command(cmd, payload); result < 0) return result;
    if (cmd == BR_TRANSACTION_COMPLETE) return 0;
    if (int result = execute(cmd, payload); result < 0) return result;
  }
}

int IpcThread::join_looper(bool entered_by_user) {
  queue(entered_by_user ? BC_ENTER_LOOPER : BC_REGISTER_LOOPER);
  int result;
  for (;;) {
    std::uint32_t cmd;
    const std::byte* payload;
    result = next_command(cmd, payload);
    if (result == 0) result = execute(cmd, payload);
    if (result < 0 || leaving_) break;
  }
  leaving_ = false;
  queue(BC_EXIT_LOOPER);
  flush();
  return result;
}

}  // namespace cused::client

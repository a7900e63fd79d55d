// SPDX-License-Identifier: GPL-2.0-only
// One open file description of a binder device (binder_proc, S1.1): its threads, nodes, refs,
// queues and buffer space, and the ioctl entry points a frontend calls. The protocol engine is
// split by concept over several files, all implementing this class as the kernel's binder.c does
// around binder_proc: proc.cc (lifetime, threads, wake-ups), ioctl.cc, command.cc (BC_ write
// loop), read.cc (BR_ read loop), transaction.cc (S4), translate.cc (S5), refcount.cc (S6),
// death.cc (S7), freeze.cc (S2.10, S2.11, S4.13), freeze_notification.cc (S7.6-S7.9),
// passed_files.cc (fds: S5.3, S5.4, S5.6, S5.8), release.cc (S1.9, S2.6). docs/protocol.md has the
// map and the lock order.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/container/static_vector.hpp>
#include <boost/intrusive/list.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/alloc/allocator.h"
#include "core/alloc/designs/registry.h"
#include "core/block_pool.h"
#include "core/buffer_file.h"
#include "core/client_mapping.h"
#include "core/completion.h"
#include "core/device.h"
#include "core/freeze.h"
#include "core/locks.h"
#include "core/node.h"
#include "core/ref.h"
#include "core/ref_table.h"
#include "core/stats.h"
#include "core/thread.h"
#include "core/thread_priority.h"
#include "core/transaction.h"
#include "core/user_memory.h"
#include "core/wake.h"
#include "core/work.h"

namespace cused::core {

class Driver;
class UserReader;
struct FreezeCall;

struct IoctlRequest {
  pid_t pid = 0;  // caller's thread group
  pid_t tid = 0;  // caller's thread: binder threads are keyed on it
  uid_t euid = 0;
  unsigned cmd = 0;
  std::span<const std::byte> arg;  // the argument as copied in (restricted ioctl: by value)
  bool nonblock = false;           // O_NONBLOCK on the file (S1.11)
  // Copies of the caller's memory the frontend made with the argument (ReadAheadHint), each
  // range's `dst` holding its `len` bytes from `addr`: the write half reads from them where its
  // reads fall inside, and from the caller otherwise.
  std::span<const UserRange> read_ahead;
  // The argument's address in the caller, as the ioctl was made (binder_ioctl's `arg`): only
  // traced (binder_ioctl), never dereferenced. 0 where the frontend does not know it.
  std::uint64_t arg_address = 0;
};

inline constexpr unsigned kPollIn = 0x1;   // EPOLLIN
inline constexpr unsigned kPollErr = 0x8;  // EPOLLERR

// A transaction failure as binder_transaction reports it: the BR_ code for the sender, the errno
// for the extended error (S2.14).
struct TxnError {
  std::uint32_t br = 0;
  std::int32_t param = 0;
  // Where the failure was decided (the kernel's return_error_line, S10.6 transaction logs).
  std::uint32_t line = __builtin_LINE();
  explicit operator bool() const { return br != 0; }
};

// Counters a test or a log line can read (binder_logs "state"/"stats" subsets).
struct ProcCounts {
  std::size_t threads = 0;
  std::size_t nodes = 0;
  std::size_t refs = 0;
  std::size_t todo = 0;
  std::size_t delivered_deaths = 0;
  std::size_t buffers = 0;
  std::uint32_t requested_threads = 0;
  std::uint32_t requested_threads_started = 0;
  int outstanding_txns = 0;
};

// binder_node_inner_lock: the node lock, and its owner's inner lock while the node has an owner.
class CUSED_SCOPED_CAPABILITY NodeInnerGuard {
 public:
  explicit NodeInnerGuard(Node& node) CUSED_ACQUIRE(node.lock) CUSED_NO_THREAD_SAFETY_ANALYSIS;
  ~NodeInnerGuard() CUSED_RELEASE() CUSED_NO_THREAD_SAFETY_ANALYSIS;
  NodeInnerGuard(const NodeInnerGuard&) = delete;
  NodeInnerGuard& operator=(const NodeInnerGuard&) = delete;
  // The owner whose inner lock is held; null for a dead node.
  Proc* owner() const { return owner_; }

 private:
  Node& node_;
  Proc* owner_;
};

// A node held through a driver temporary reference (binder_get_node .. binder_put_node): the
// node's counters see it (S6.5 "tmp"), and it is put back when this goes.
class NodeTmpRef {
 public:
  NodeTmpRef() = default;
  // `node`'s tmp_refs already counts this reference.
  explicit NodeTmpRef(std::shared_ptr<Node> node) : node_(std::move(node)) {}
  ~NodeTmpRef() { reset(); }
  NodeTmpRef(NodeTmpRef&& other) noexcept = default;
  NodeTmpRef& operator=(NodeTmpRef&& other) noexcept;

  void reset();
  explicit operator bool() const { return node_ != nullptr; }
  Node* operator->() const { return node_.get(); }
  Node& operator*() const { return *node_; }
  const std::shared_ptr<Node>& shared() const { return node_; }

 private:
  std::shared_ptr<Node> node_;
};

class Proc final : public std::enable_shared_from_this<Proc>, public ReadResumer {
 public:
  // S1.1: every open of `device` is a fresh proc with its own buffer space, with the device's
  // variant of the moment. The proc is released (S1.9) when the frontend calls release() or drops
  // the last copy of the returned pointer.
  static std::shared_ptr<Proc> open(std::shared_ptr<Device> device, const OpenerIdentity& opener,
                                    std::unique_ptr<BufferFile> buffers,
                                    std::unique_ptr<MappingFinder> mapping);
  // `options`: the device's variant when the proc was opened.
  Proc(std::shared_ptr<Device> device, const DeviceOptions& options, const OpenerIdentity& opener,
       std::unique_ptr<BufferFile> buffers, std::unique_ptr<MappingFinder> mapping);
  ~Proc();
  Proc(const Proc&) = delete;
  Proc& operator=(const Proc&) = delete;

  pid_t pid() const { return pid_; }
  uid_t euid() const { return euid_; }
  BufferFile& buffers() { return *buffers_; }
  Device& device() { return *device_; }
  alloc::Allocator& allocator() { return *alloc_; }
  // The device's variant when this proc opened (docs/design.md section 5): what stats and logs
  // print.
  const DeviceOptions& options() const { return options_; }
  // This proc's BC_/BR_ counters (S10.6 `stats`).
  Stats& stats() { return stats_; }
  // binder_stat_br / the BC_ count of binder_thread_write: this proc's counter and the driver's.
  void count_command(std::uint32_t cmd);
  void count_return(std::uint32_t cmd);
  // `counter` counts one live object of `type` in the driver's stats, from now until it goes.
  void count_object(ObjCounter& counter, ObjStat type);

  void ioctl(const IoctlRequest& request, std::unique_ptr<Completion> completion);
  // The frontend saw an interrupt for `tid`'s outstanding request (after marking it interrupted).
  void interrupt(pid_t tid);
  // S1.10: events for the calling thread; `waiter` is kept and notified when work arrives.
  unsigned poll(pid_t tid, std::unique_ptr<PollWaiter> waiter);
  // S1.8: every close() of an fd: wake readers, who return with BR_NOOP.
  void flush();
  // S1.9: the last reference is gone. Idempotent.
  void release();
  // The buffer space, mapped on first use (S1.7): false while the client has not mapped it (or
  // mapped it writable, which the kernel refuses, S1.4). Frontends that see the client's memory
  // calls ask it too (`cused run`'s mprotect rule, cused/run/vma_rules.h).
  bool ensure_mapped() CUSED_EXCLUDES(inner_lock_);
  // OS thread `tid` of the proc's process has exited: its binder thread, if it has one, is
  // released as BINDER_THREAD_EXIT releases it (S2.6). For a frontend that cannot see that
  // ioctl when its argument is NULL (FUSE's restricted ioctls, libbinder's threadDestructor) and
  // watches its callers' threads instead (docs/binderfs.md).
  void thread_exited(pid_t tid);

  ProcCounts counts() const;
  // Node state for tests and logs: {has_strong, has_weak, local_strong, local_weak,
  // internal_strong, refs} of this proc's node `ptr`, if it has one.
  struct NodeCounts {
    bool has_strong_ref, has_weak_ref;
    int local_strong_refs, local_weak_refs, internal_strong_refs;
    std::size_t refs;
  };
  std::optional<NodeCounts> node_counts(binder_uintptr_t ptr) const;
  // S8.1 looper flags of thread `tid`, if the proc has that thread.
  std::optional<std::uint32_t> thread_looper(pid_t tid) const;
  // What to read with thread `tid`'s next BINDER_WRITE_READ argument (ReadAheadHint): its last
  // write buffer's first window (to its page's end at least, where bytes are as readable as what
  // was read last time) and its last payload. Empty for a thread the proc does not have.
  ReadAheadHint read_ahead_hint(pid_t tid) const CUSED_EXCLUDES(inner_lock_);
  // {strong, weak} of this proc's handle `desc`, if it exists.
  std::optional<std::pair<std::uint32_t, std::uint32_t>> ref_counts(std::uint32_t desc) const;

  // WakeScope runs a woken read through here (wake.h).
  void resume_read(const std::shared_ptr<Thread>& thread,
                   std::unique_ptr<PendingRead> read) override;

 private:
  friend class DebugPrint;        // binder_logs (debug_print.cc) reads the proc as the kernel does
  friend class InvariantChecker;  // core/invariants.h reads every field
  using WaitingList = boost::intrusive::list<
      Thread, boost::intrusive::member_hook<Thread, WaitingHook, &Thread::waiting_hook>,
      boost::intrusive::constant_time_size<false>>;

  // ---- proc.cc: threads, queues and wake-ups
  std::shared_ptr<Thread> get_thread(pid_t tid) CUSED_EXCLUDES(inner_lock_);
  // `thread` is one of ours: its inner_lock is this proc's, which the caller holds.
  void assume_locked(const Thread& thread) const CUSED_REQUIRES(inner_lock_)
      CUSED_ASSERT_CAPABILITY(thread.inner_lock);
  bool has_work(Thread& thread, bool do_proc_work) CUSED_REQUIRES(inner_lock_);
  bool thread_is_dead(const Thread& thread) const CUSED_REQUIRES(inner_lock_);
  void enqueue_thread_work(Thread& thread, Work& work) CUSED_REQUIRES(inner_lock_);
  void enqueue_deferred_thread_work(Thread& thread, Work& work) CUSED_REQUIRES(inner_lock_);
  void dequeue_work(Work& work) CUSED_EXCLUDES(inner_lock_);
  Thread* select_thread() CUSED_REQUIRES(inner_lock_);
  void wake_thread(Thread& thread) CUSED_REQUIRES(inner_lock_);
  void wake_poll_threads() CUSED_REQUIRES(inner_lock_);
  void wakeup_proc() CUSED_REQUIRES(inner_lock_);
  void wakeup_thread_or_poll(Thread* thread) CUSED_REQUIRES(inner_lock_);

  // ---- priority.cc: binder's nice inheritance (S4.12), through Driver::thread_priorities()
  // The thread's nice now; 0 without a host that reads it.
  int thread_nice(const Thread& thread) const;
  // binder_set_nice on `thread`, clamped as can_nice() would for the proc's opener.
  void set_nice(const Thread& thread, int nice) const;
  // The receiver of `t` (for `target`) takes the sender's nice or the node's minimum.
  void inherit_priority(const Thread& thread, Transaction& t, const Node& target) const;

  // ---- android_priority.cc: priority=android, the Android common kernel's inheritance of
  // scheduling policy and priority (docs/variants.md), through the same host
  bool android_priority() const { return options_.priority == DeviceOptions::Priority::kAndroid; }
  // binder_transaction's t->priority: a sync sender's own policy and priority when binder
  // supports its policy, else the target's default.
  SchedPriority sender_sched_priority(const Thread& thread, std::uint32_t flags,
                                      const Proc& target) const;
  // binder_transaction_priority: the receiver of `t` takes its priority (a real-time one only
  // when `node` inherits real time), or the node's minimum when that is more urgent; once per
  // transaction, saving what the thread had for the reply.
  void transaction_priority(Thread& thread, Transaction& t, const Node& node) const;
  // binder_do_set_priority: verify (binder_set_priority) bounds it by what the opener could
  // set itself; without (binder_restore_priority) it is set as it is, unless aborted.
  void set_sched_priority(Thread& thread, SchedPriority desired, bool verify) const;
  // A reply's binder_restore_priority; for a nested call it is pending until it is done.
  void restore_after_reply(Thread& thread, const Transaction& in_reply_to) const;
  // This proc's security label as a sender (S4.9). Returns 0 or the source's -errno.
  int security_label(std::string& out) CUSED_EXCLUDES(label_lock_);

  // ---- ioctl.cc
  void write_read(const std::shared_ptr<Thread>& thread, const IoctlRequest& request,
                  std::unique_ptr<Completion> completion);
  int set_context_mgr(const IoctlRequest& request, const flat_binder_object* fbo);
  int get_node_debug_info(binder_node_debug_info& info) CUSED_EXCLUDES(inner_lock_);
  int get_node_info_for_ref(binder_node_info_for_ref& info);
  binder_extended_error take_extended_error(Thread& thread) CUSED_EXCLUDES(inner_lock_);
  void end_ioctl(Thread& thread) CUSED_EXCLUDES(inner_lock_);

  // ---- command.cc: the BC_ write loop (S3.1)
  // `files`: the caller's file table, null where the frontend cannot reach it (passed_files.h).
  // `read_ahead`: the frontend's copies made with the argument (IoctlRequest::read_ahead).
  int write_commands(Thread& thread, UserMemory& caller, std::span<const UserRange> read_ahead,
                     CallerFiles* files, binder_write_read& bwr, uid_t caller_euid);
  int run_command(Thread& thread, std::uint32_t cmd, UserReader& reader, CallerFiles* files,
                  uid_t caller_euid);
  int change_ref_count(std::uint32_t cmd, std::uint32_t target);
  static std::shared_ptr<Proc> node_owner(const Node& node) CUSED_EXCLUDES(node.lock);
  void ref_done(std::uint32_t cmd, const binder_ptr_cookie& ptr_cookie);
  void register_looper(Thread& thread) CUSED_EXCLUDES(inner_lock_);
  void enter_looper(Thread& thread) CUSED_EXCLUDES(inner_lock_);
  void exit_looper(Thread& thread) CUSED_EXCLUDES(inner_lock_);
  void free_buffer_command(Thread& thread, binder_uintptr_t address, CallerFiles* files);
  bool return_error_pending(Thread& thread) CUSED_EXCLUDES(inner_lock_);

  // ---- read.cc: the BR_ read loop (S3.2)
  void start_read(const std::shared_ptr<Thread>& thread, std::unique_ptr<PendingRead> read);
  // Runs binder_thread_read from its wait point: completes the request or parks it.
  void run_read(const std::shared_ptr<Thread>& thread, std::unique_ptr<PendingRead> read);
  enum class ReadStep { kContinue, kDone, kEmpty, kFault };
  ReadStep emit_next(Thread& thread, PendingRead& read, bool wait_for_proc_work);
  ReadStep emit_transaction(Thread& thread, PendingRead& read,
                            const std::shared_ptr<Transaction>& t);
  ReadStep drop_undeliverable(Thread& thread, PendingRead& read,
                              const std::shared_ptr<Transaction>& t, alloc::Buffer& buffer);
  ReadStep emit_node_work(PendingRead& read, Node& node);
  std::uint32_t completion_code(WorkType type) CUSED_REQUIRES(inner_lock_);
  void finish_read(Thread& thread, std::unique_ptr<PendingRead> read, long result)
      CUSED_EXCLUDES(inner_lock_);
  void maybe_spawn_looper(Thread& thread, PendingRead& read) CUSED_EXCLUDES(inner_lock_);
  std::unique_ptr<PendingRead> unpark(Thread& thread) CUSED_REQUIRES(inner_lock_);
  // The read state of a new BINDER_WRITE_READ: the one the thread's last read left, or new.
  std::unique_ptr<PendingRead> new_read(Thread& thread) CUSED_EXCLUDES(inner_lock_);

  // ---- transaction.cc: BC_TRANSACTION / BC_REPLY (S4)
  struct TxnPlan;
  void transact(Thread& thread, UserMemory& memory, CallerFiles* files,
                const binder_transaction_data& tr, bool reply, binder_size_t extra_buffers_size,
                uid_t caller_euid);
  TxnError find_reply_target(Thread& thread, TxnPlan& plan) CUSED_EXCLUDES(inner_lock_);
  TxnError find_call_target(Thread& thread, const binder_transaction_data& tr, TxnPlan& plan);
  static NodeTmpRef node_refs_for_txn(Node& node, std::shared_ptr<Proc>& target_proc);
  TxnError check_sender_stack(Thread& thread, const binder_transaction_data& tr, TxnPlan& plan)
      CUSED_EXCLUDES(inner_lock_);
  PayloadHint payload_hint_for(const binder_transaction_data& tr) const;
  TxnError fill_buffer(Thread& thread, UserMemory& memory, const binder_transaction_data& tr,
                       binder_size_t extra_buffers_size, TxnPlan& plan);
  TxnError deliver(Thread& thread, TxnPlan& plan) CUSED_EXCLUDES(inner_lock_);
  TxnError deliver_reply(Thread& thread, TxnPlan& plan) CUSED_EXCLUDES(inner_lock_);
  TxnError deliver_call(Thread& thread, TxnPlan& plan) CUSED_EXCLUDES(inner_lock_);
  TxnError deliver_oneway(Thread& thread, TxnPlan& plan) CUSED_EXCLUDES(inner_lock_);
  void fail_transaction(Thread& thread, TxnPlan& plan, TxnError error) CUSED_EXCLUDES(inner_lock_);
  // S4.14: binder_transaction's log entry, and its copy in the failed ring when `error` is set.
  void record_transaction(pid_t tid, const binder_transaction_data& tr, const TxnPlan& plan,
                          const TxnError& error);
  std::uint32_t proc_transaction(const std::shared_ptr<Transaction>& t, Thread* thread,
                                 BufferState& state) CUSED_EXCLUDES(inner_lock_);
  std::uint32_t queue_transaction(const std::shared_ptr<Transaction>& t, Thread* thread,
                                  BufferState& state, std::shared_ptr<Transaction>& outdated)
      CUSED_EXCLUDES(inner_lock_);
  static void send_failed_reply(std::shared_ptr<Transaction> t, std::uint32_t error);
  static void cleanup_transaction(const std::shared_ptr<Transaction>& t, std::uint32_t error);
  static void free_transaction(Transaction& t);

  static void pop_transaction(Thread& target_thread, Transaction& t)
      CUSED_REQUIRES(target_thread.inner_lock);
  static void set_txn_from_error(Transaction& t, int id, std::uint32_t command, std::int32_t param);
  BufferState* buffer_state(const alloc::Buffer& buffer) CUSED_REQUIRES(inner_lock_);
  // The buffer's record taken out of buffer_states_ as its buffer is freed (empty if none).
  BufferState take_buffer_state(const alloc::Buffer& buffer) CUSED_REQUIRES(inner_lock_);
  // Files `state` as the record of `buffer`, in a node a freed buffer's record left if any.
  void file_buffer_state(const alloc::Buffer* buffer, BufferState state)
      CUSED_REQUIRES(inner_lock_);

  // ---- translate.cc: objects (S5) and their release on free (S5.8)
  struct Translation;
  TxnError translate_objects(Thread& thread, UserMemory& memory, const binder_transaction_data& tr,
                             TxnPlan& plan);
  // `txn_id`: the transaction's debug id, for its tracepoints.
  int translate_binder(Thread& thread, flat_binder_object& fp, Proc& target, BufferState& state,
                       int txn_id);
  int translate_handle(flat_binder_object& fp, Proc& target, BufferState& state, int txn_id);
  static int translate_fd_object(binder_fd_object& fdo, binder_size_t object_offset,
                                 const Translation& x, BufferState& state);
  static int translate_fd_array(UserMemory& memory, const binder_fd_array_object& fda,
                                Translation& x, std::size_t index, binder_uintptr_t target_base,
                                BufferState& state);
  static int translate_ptr(binder_buffer_object& bp, Translation& x, std::size_t index,
                           binder_uintptr_t target_base);
  static int copy_sg_buffers(UserMemory& memory, const Translation& x, std::byte* contents);
  // `closer`: the file table of the process freeing the buffer, for the FDA fds (S5.8).
  void release_objects(Thread* thread, BufferState& state, CallerFiles* closer)
      CUSED_EXCLUDES(inner_lock_);
  void free_buffer(Thread* thread, alloc::Buffer& buffer, CallerFiles* closer)
      CUSED_EXCLUDES(inner_lock_);

  // ---- passed_files.cc: fds (S5.3, S5.4, S5.6, S5.8). CallerFiles is only ever called with no
  // engine lock held.
  // What binder_translate_fd checks before it takes a file, fixed for a whole transaction.
  struct FdRules {
    bool target_accepts = false;    // a call: the node's ACCEPTS_FDS; a reply: TF_ACCEPT_FDS
    CallerFiles* sender = nullptr;  // the sender's file table (null: FUSE, CUSE)
    bool target_receives = false;   // the target proc can install fds (receives_files_)
    int txn_id = 0;                 // the transaction's debug id, for its tracepoints
  };
  static int take_file(std::uint32_t fd, binder_size_t offset, bool in_array, const FdRules& rules,
                       BufferState& state);
  int install_files(PendingRead& read, alloc::Buffer& buffer) CUSED_EXCLUDES(inner_lock_);
  std::vector<FileFixup> take_pending_files(const alloc::Buffer& buffer)
      CUSED_EXCLUDES(inner_lock_);
  void keep_array_fds(const alloc::Buffer& buffer, std::vector<int> fds)
      CUSED_EXCLUDES(inner_lock_);
  void close_array_fds(Thread* thread, const std::vector<int>& fds, CallerFiles* closer)
      CUSED_EXCLUDES(inner_lock_);
  static void close_fds(CallerFiles* files, const std::vector<int>& fds);

  // ---- refcount.cc: nodes and refs (S6). The node functions are static: a node's owner may
  // be any proc, and they lock whatever the node needs (binder_node_inner_lock). The node decides
  // (Node::increment/decrement, core/node.h); its owner carries the decision out (carry_out).
  friend class NodeInnerGuard;
  friend class NodeTmpRef;
  // For code that holds this proc's inner lock through a path the analysis cannot follow (a
  // NodeInnerGuard on one of this proc's nodes).
  void assume_inner_locked() const CUSED_ASSERT_CAPABILITY(inner_lock_) {}
  static int inc_node_nilocked(Node& node, bool strong, bool internal, Thread* target_thread)
      CUSED_REQUIRES(node.lock);
  static std::shared_ptr<Node> dec_node_nilocked(Node& node, bool strong, bool internal)
      CUSED_REQUIRES(node.lock);
  static int inc_node(Node& node, bool strong, bool internal, Thread* target_thread)
      CUSED_EXCLUDES(node.lock);
  static void dec_node(Node& node, bool strong, bool internal) CUSED_EXCLUDES(node.lock);
  // The owner's part of a node's count change (core/node.h), on the owner's lists; the caller
  // holds our inner lock with the node's. Returns the node when it left our tree.
  std::shared_ptr<Node> carry_out(Node& node, NodeOwnerAction action, Thread* sender);
  std::shared_ptr<Node> erase_node(Node& node);
  static void put_node(Node& node) CUSED_EXCLUDES(node.lock);
  NodeTmpRef get_node(binder_uintptr_t ptr) CUSED_EXCLUDES(inner_lock_);
  NodeTmpRef new_node(const flat_binder_object* fp) CUSED_EXCLUDES(inner_lock_);
  // `ref`: the ref that was found (binder_ref_data), for the tracepoints.
  NodeTmpRef get_node_from_ref(std::uint32_t desc, bool need_strong,
                               std::uint32_t* strong = nullptr, std::uint32_t* weak = nullptr,
                               RefData* ref = nullptr) CUSED_EXCLUDES(outer_lock_);
  int inc_ref_for_node(Node& node, bool strong, Thread* target_thread, RefData& ref)
      CUSED_EXCLUDES(outer_lock_);
  int update_ref_for_handle(std::uint32_t desc, bool increment, bool strong,
                            std::uint32_t* out_desc) CUSED_EXCLUDES(outer_lock_);
  Ref* get_ref(std::uint32_t desc, bool need_strong) CUSED_REQUIRES(outer_lock_);
  Ref& ref_for_node(Node& node) CUSED_REQUIRES(outer_lock_);
  int inc_ref(Ref& ref, bool strong, Thread* target_thread) CUSED_REQUIRES(outer_lock_);
  bool dec_ref(Ref& ref, bool strong) CUSED_REQUIRES(outer_lock_);
  void cleanup_ref(Ref& ref) CUSED_REQUIRES(outer_lock_);

  // ---- death.cc (S7.1-S7.5)
  void request_death_notification(Thread& thread, const binder_handle_cookie& hc);
  void clear_death_notification(Thread& thread, const binder_handle_cookie& hc);
  void dead_binder_done(Thread& thread, binder_uintptr_t cookie) CUSED_EXCLUDES(inner_lock_);
  void queue_clear_death_done(Thread& thread, Death& death) CUSED_REQUIRES(inner_lock_);

  // ---- freeze.cc: BINDER_FREEZE / BINDER_GET_FROZEN_INFO (S2.10, S2.11), TF_UPDATE_TXN (S4.13)
  void freeze_ioctl(const std::shared_ptr<Thread>& thread, const IoctlRequest& request,
                    std::unique_ptr<Completion> completion);
  int get_frozen_info(binder_frozen_status_info& info);
  // Runs a BINDER_FREEZE from its current target on; `resumed`: that target's wait just ended.
  static void continue_freeze(const std::shared_ptr<FreezeCall>& call, bool resumed);
  static void finish_freeze(const std::shared_ptr<FreezeCall>& call, int result);
  bool interrupt_freeze(pid_t tid) CUSED_EXCLUDES(inner_lock_);
  static bool take_interrupt(const std::shared_ptr<FreezeCall>& call, std::uint64_t id);
  static void fail_interrupted_freeze(const std::shared_ptr<FreezeCall>& call);
  void thaw() CUSED_EXCLUDES(inner_lock_);
  void begin_freeze() CUSED_EXCLUDES(inner_lock_);
  std::uint64_t park_freeze(const std::shared_ptr<FreezeCall>& call) CUSED_EXCLUDES(inner_lock_);
  int end_freeze() CUSED_EXCLUDES(inner_lock_);
  void forget_freeze_waiter(const FreezeCall& call) CUSED_EXCLUDES(inner_lock_);
  bool txns_pending() CUSED_REQUIRES(inner_lock_);
  // After outstanding_txns_ went down: the waits of BINDER_FREEZE calls end once it reaches 0.
  std::vector<FreezeWaiter> take_drained_freeze_waiters() CUSED_REQUIRES(inner_lock_);
  // Ends the waits of `waiters` (drained from this proc) on the driver's timer.
  void resume_drained(std::vector<FreezeWaiter> waiters);
  std::shared_ptr<Transaction> find_outdated_transaction(Node& node, const Transaction& t)
      CUSED_REQUIRES(inner_lock_, node.lock);
  void discard_outdated_transaction(const std::shared_ptr<Transaction>& outdated)
      CUSED_EXCLUDES(inner_lock_);

  // ---- freeze_notification.cc (S7.6-S7.9)
  int request_freeze_notification(const binder_handle_cookie& hc);
  int clear_freeze_notification(const binder_handle_cookie& hc);
  int freeze_notification_done(binder_uintptr_t cookie) CUSED_EXCLUDES(inner_lock_);
  void add_freeze_work(bool is_frozen) CUSED_EXCLUDES(inner_lock_);

  // ---- release.cc (S1.9, S2.6)
  int release_thread(const std::shared_ptr<Thread>& thread) CUSED_EXCLUDES(inner_lock_);
  void release_node(const std::shared_ptr<Node>& node) CUSED_EXCLUDES(inner_lock_);
  void release_work(const std::function<DequeuedWork()>& pop);
  void release_threads() CUSED_EXCLUDES(inner_lock_);
  void release_nodes() CUSED_EXCLUDES(inner_lock_);
  void release_refs() CUSED_EXCLUDES(outer_lock_);

  const std::shared_ptr<Device> device_;
  Driver& driver_;
  Context& context_;
  const pid_t pid_;
  const uid_t euid_;
  const DeviceOptions options_;
  const bool defer_complete_;
  const std::shared_ptr<SecurityLabelSource> labels_;
  // S4.12: the host that reads and sets threads' nice (null: none is changed), what the opener
  // may set, and the opener's nice (binder_proc's default_priority).
  const std::shared_ptr<ThreadPriorities> priorities_;
  const NicePermission nice_permission_;
  const int default_priority_;
  // priority=android: binder_proc's default_priority as the ACK has it, the opener's policy too.
  const SchedPriority default_sched_priority_;
  // S4.9: the kernel labels a sender by the credentials its proc was opened with; cused reads the
  // label once, the first time one is needed, and keeps it.
  sync::Mutex label_lock_;
  std::optional<std::string> label_ CUSED_GUARDED_BY(label_lock_);
  int label_error_ CUSED_GUARDED_BY(label_lock_) = 0;
  const std::unique_ptr<BufferFile> buffers_;
  sync::Mutex map_lock_;  // serializes the lazy mapping lookup (S1.7)
  const std::unique_ptr<MappingFinder> mapping_ CUSED_PT_GUARDED_BY(map_lock_);
  std::unique_ptr<alloc::Allocator> alloc_;
  std::atomic<bool> released_{false};
  // Set by the first ioctl that came with a file table (Completion::caller_files()): from then on
  // the proc's reads can install the fds sent to it, so senders may pass it fds. Atomic, no lock:
  // it only ever goes from false to true, and senders read it without the proc's locks.
  std::atomic<bool> receives_files_{false};
  Stats stats_;
  ObjCounter counter_;
  // The slab caches of the transactions this proc sends and of their senders' completions.
  const std::shared_ptr<BlockPool> transaction_pool_ = std::make_shared<BlockPool>();
  const std::shared_ptr<BlockPool> complete_pool_ = std::make_shared<BlockPool>();

  const sync::LockPolicy lock_policy_;  // of the proc's locks and its nodes'
  mutable OuterLock outer_lock_;
  RefTable refs_ CUSED_GUARDED_BY(outer_lock_);

  mutable InnerLock inner_lock_;
  std::map<pid_t, std::shared_ptr<Thread>> threads_ CUSED_GUARDED_BY(inner_lock_);
  std::map<binder_uintptr_t, std::shared_ptr<Node>> nodes_ CUSED_GUARDED_BY(inner_lock_);
  WaitingList waiting_threads_ CUSED_GUARDED_BY(inner_lock_);
  WorkList todo_ CUSED_GUARDED_BY(inner_lock_);
  WorkList delivered_death_ CUSED_GUARDED_BY(inner_lock_);
  WorkList delivered_freeze_ CUSED_GUARDED_BY(inner_lock_);
  FreezeState freeze_ CUSED_GUARDED_BY(inner_lock_);
  using BufferStates = std::unordered_map<const alloc::Buffer*, BufferState>;
  BufferStates buffer_states_ CUSED_GUARDED_BY(inner_lock_);
  // The map nodes of the last records taken out, reused by the next ones filed: a transaction's
  // record costs no allocation.
  boost::container::static_vector<BufferStates::node_type, 4> spare_states_
      CUSED_GUARDED_BY(inner_lock_);
  std::uint32_t max_threads_ CUSED_GUARDED_BY(inner_lock_) = 0;
  std::uint32_t requested_threads_ CUSED_GUARDED_BY(inner_lock_) = 0;
  std::uint32_t requested_threads_started_ CUSED_GUARDED_BY(inner_lock_) = 0;
  int outstanding_txns_ CUSED_GUARDED_BY(inner_lock_) = 0;
  bool is_dead_ CUSED_GUARDED_BY(inner_lock_) = false;
  bool oneway_spam_detection_enabled_ CUSED_GUARDED_BY(inner_lock_) = false;
};

}  // namespace cused::core

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The C ABI between cused and a kernel design: a shared object built from a kernel tree's
 * drivers/android/binder_alloc.c (unmodified), cused/kernel_shim/runtime.c and cused/kernel_shim/glue.c.
 *
 * cused hands the object a table of what only cused can do (struct cused_krt: its locks, the
 * memfd pages a proc's buffers live in, the global page LRU, its trace and log); the object
 * answers with a table of the allocator's entry points (struct cused_kabi), the same for every
 * kernel version: glue.c adapts each version's binder_alloc API to it (docs/kernel-designs.md).
 * Bump CUSED_KABI_VERSION when either table changes: a cached object of another version is
 * rebuilt.
 */
#ifndef CUSED_KERNEL_ABI_H
#define CUSED_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUSED_KABI_VERSION 5

/* What a cused lock stands for in the kernel's file. */
enum cused_klock_kind {
	CUSED_KLOCK_MUTEX = 0,	/* struct mutex: cused's policy mutex */
	CUSED_KLOCK_SPIN = 1,	/* spinlock_t: cused's spinlock inside a preempt-disabled section */
};

/* The kernel's trace events that cused emits as its own (core/trace_events.h). */
enum cused_ktrace {
	CUSED_KTRACE_ALLOC_LRU_START,
	CUSED_KTRACE_ALLOC_LRU_END,
	CUSED_KTRACE_FREE_LRU_START,
	CUSED_KTRACE_FREE_LRU_END,
	CUSED_KTRACE_ALLOC_PAGE_START,
	CUSED_KTRACE_ALLOC_PAGE_END,
	CUSED_KTRACE_UNMAP_USER_START,
	CUSED_KTRACE_UNMAP_USER_END,
	CUSED_KTRACE_UNMAP_KERNEL_START,
	CUSED_KTRACE_UNMAP_KERNEL_END,
};

/* What the kernel's debug options would have printed (docs/kernel-designs.md, "Checks"). */
enum cused_kreport {
	CUSED_KREPORT_WARN,		/* WARN_ON */
	CUSED_KREPORT_BUG,		/* BUG_ON: the call is abandoned, the proc's allocator dead */
	CUSED_KREPORT_ATOMIC_SLEEP,	/* CONFIG_DEBUG_ATOMIC_SLEEP: might_sleep() under a spinlock */
	CUSED_KREPORT_LEAK,		/* pages still referenced after the proc's release */
	CUSED_KREPORT_LOCK_LEAK,	/* a lock still held when the entry point returns */
	CUSED_KREPORT_LOCK_ORDER,	/* lockdep: two lock classes taken in both orders */
};

/* cused's side. `owner` is the allocator a proc's calls were made for (struct cused_kproc_init). */
struct cused_krt {
	/* Locks. `name` is the kernel's name for the lock ("&alloc->mutex"); `owner` the allocator
	 * of the task that made it (its lock_policy= applies; a static lock's, DEFINE_MUTEX's, is
	 * the first task's to take it), NULL when no task made it. */
	void *(*lock_create)(void *owner, enum cused_klock_kind kind, const char *name);
	void (*lock_destroy)(void *lock);
	void (*lock_lock)(void *lock);
	int (*lock_trylock)(void *lock);
	void (*lock_unlock)(void *lock);
	/* Reader-writer locks: the mmap lock ("&mm->mmap_lock") and the per-VMA locks
	 * ("vma->vm_lock") of the proc whose allocator is `owner`. */
	void *(*rwlock_create)(void *owner, const char *name);
	void (*rwlock_destroy)(void *lock);
	void (*rwlock_read_lock)(void *lock);
	int (*rwlock_read_trylock)(void *lock);
	void (*rwlock_read_unlock)(void *lock);
	void (*rwlock_write_lock)(void *lock);
	void (*rwlock_write_unlock)(void *lock);
	/* The global page LRU's lock (list_lru's lock), as a lock for the calls above: the lock
	 * of the LRU that lru_select chose last on this thread. */
	void *lru_lock;
	void (*lru_select)(void *owner);

	/* The memfd page at `index` of owner's space: make it present (0 or -errno), its address in
	 * the daemon's mapping, punch it out again. */
	int (*page_install)(void *owner, size_t index);
	void *(*page_address)(void *owner, size_t index);
	void (*page_punch)(void *owner, size_t index);
	/* The page at `index` joins / leaves the global LRU, or is isolated from it by the
	 * shrinker; called with lru_lock held. */
	void (*lru_link)(void *owner, size_t index);
	void (*lru_unlink)(void *owner, size_t index);
	void (*lru_isolate)(void *owner, size_t index);

	void (*trace)(void *owner, enum cused_ktrace event, size_t page_index);
	/* binder_update_page_range: the pages from `offset` of owner's space that the file takes
	 * off the LRU (allocate 1) or puts on it (allocate 0), as its tracepoint computes them:
	 * `size` is the end less the start in unsigned arithmetic, so a range whose end lies before
	 * its start (a free within one page) wraps, as the kernel prints it. */
	void (*trace_range)(void *owner, int allocate, size_t offset, size_t size);
	/* A line the kernel would have logged (pr_*), without its newline. */
	void (*log)(void *owner, int level, const char *line);
	/* A debug check fired; `text` says what and where. */
	void (*report)(void *owner, enum cused_kreport kind, const char *text);
	/* Lockdep's lock-order rule is checked while *lockdep is nonzero (read at each lock; NULL:
	 * never). Off, it costs one load per lock taken. */
	const int *lockdep;
};

struct cused_kproc;	/* one proc's binder_alloc, its mm and its vma */
struct cused_kbuf;	/* a struct binder_buffer */

/* A buffer's fields, read in one go. */
struct cused_kbuf_info {
	unsigned long user_data;
	size_t size;		/* binder_alloc_buffer_size: its space up to the next buffer */
	size_t data_size, offsets_size, extra_buffers_size;
	int pid;
	uint32_t debug_id;
	uint8_t async_transaction, oneway_spam_suspect, clear_on_free, allow_user_free;
	void *cookie;		/* what buf_set_cookie stored */
};

enum cused_kbuf_field {
	CUSED_KBUF_DEBUG_ID,
	CUSED_KBUF_CLEAR_ON_FREE,
	CUSED_KBUF_ALLOW_USER_FREE,
};

/* The object's side, one per loaded object (cused_kabi_get). */
struct cused_kabi {
	uint32_t abi_version;
	const char *kernel_version;	/* the tree's, e.g. "7.2.8" */

	/* binder_alloc_shrinker_init; 0 or -errno. Called once, before anything else. */
	int (*init)(const struct cused_krt *rt);
	/* binder_alloc_init for a proc of thread group `pid`, whose buffer space has `pages`
	 * pages at most; NULL when out of memory. */
	struct cused_kproc *(*proc_new)(void *owner, int pid, size_t pages);
	/* binder_alloc_mmap_handler for a mapping of `length` bytes at `vm_start`. */
	int (*mmap)(struct cused_kproc *proc, unsigned long vm_start, size_t length);
	/* binder_alloc_vma_close, then the mapping goes (munmap's zap of every page). */
	void (*munmap)(struct cused_kproc *proc);
	/* binder_alloc_deferred_release after the client's mm is dropped. A shrinker may still be
	 * freeing a page it isolated before: reclaim_page calls in flight may outlive it. */
	void (*release)(struct cused_kproc *proc);
	/* After release, once no reclaim_page call on the proc is in flight: the leak check (pages
	 * still accounted to the proc's mm), then the proc is freed. */
	void (*free)(struct cused_kproc *proc);

	/* binder_alloc_new_buf, as thread group `pid`; NULL and *error = -errno on failure. */
	struct cused_kbuf *(*new_buf)(struct cused_kproc *proc, size_t data_size,
				      size_t offsets_size, size_t extra_buffers_size,
				      int is_async, int pid, int *error);
	/* binder_alloc_prepare_to_free; NULL and *error = -ENOENT (no match) or -EPERM. */
	struct cused_kbuf *(*prepare_to_free)(struct cused_kproc *proc,
					      unsigned long user_ptr, int *error);
	void (*free_buf)(struct cused_kproc *proc, struct cused_kbuf *buf);
	int (*copy_to_buffer)(struct cused_kproc *proc, struct cused_kbuf *buf,
			      size_t offset, const void *src, size_t bytes);
	int (*copy_from_buffer)(struct cused_kproc *proc, struct cused_kbuf *buf,
				size_t offset, void *dst, size_t bytes);

	void (*buf_info)(struct cused_kproc *proc, const struct cused_kbuf *buf,
			 struct cused_kbuf_info *info);
	/* Under the allocator's lock: the field shares its word with `free`, which the file's tree
	 * walks read under that lock (TSan saw the race when it was set without it). */
	void (*buf_set)(struct cused_kproc *proc, struct cused_kbuf *buf,
			enum cused_kbuf_field field, uint32_t value);
	/* cused's handle of the buffer, stored in the buffer. */
	void (*buf_set_cookie)(struct cused_kbuf *buf, void *cookie);

	int (*allocated_count)(struct cused_kproc *proc);
	size_t (*free_async_space)(struct cused_kproc *proc);
	/* Visits the allocated buffers in address order under the allocator's lock. */
	void (*for_each_allocated)(struct cused_kproc *proc,
				   void (*visit)(void *ctx, const struct cused_kbuf *buf), void *ctx);
	/* binder_alloc_print_pages / _print_allocated: their seq_file text. */
	void (*print_pages)(struct cused_kproc *proc, void (*emit)(void *ctx, const char *text),
			    void *ctx);
	void (*print_allocated)(struct cused_kproc *proc,
				void (*emit)(void *ctx, const char *text), void *ctx);
	size_t (*pages_high)(struct cused_kproc *proc);

	/* The shrinker's callback (binder_alloc_free_page) for the page at `index`, called with
	 * rt->lru_lock held; returns with it held. 1 reclaimed, 0 skipped (LRU_SKIP). */
	int (*reclaim_page)(struct cused_kproc *proc, size_t index);
	/* binder_shrink_count: pages on this object's list_lru. */
	unsigned long (*shrink_count)(void);
};

/* The one symbol cused looks up in the object. */
const struct cused_kabi *cused_kabi_get(void);

#ifdef __cplusplus
}
#endif

#endif /* CUSED_KERNEL_ABI_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stable C ABI of a kernel design (cused_kernel_abi.h) over one tree's binder_alloc.c.
 * Built with that tree's binder_alloc.h; the per-version adapters are the CUSED_* blocks below,
 * each for an API that changed between 6.1 and 7.x (docs/kernel-designs.md, "Adapters"):
 *   6.7   binder_alloc_new_buf lost its pid argument (the buffer takes current->tgid)
 *   6.8   alloc->mutex became the spinlock alloc->lock, until 6.14 made it a mutex again
 *   6.13  the list_lru walk callback lost its spinlock argument (the lock is lru->lock)
 *   6.14  alloc->pages became struct page pointers with the LRU item under page->private
 * (list_lru_add's arguments, register_shrinker and the zap's name are adapted in
 * cused_kernel_api.h.)
 */
#include <stdlib.h>

#include "binder_alloc.h"
#include "cused_kernel_abi.h"
#include "runtime.h"

#define CUSED_NEW_BUF_HAS_PID (LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0))
/* The build reads it from the tree's binder_alloc.h (a patch may change it); else by version. */
#ifndef CUSED_ALLOC_SPINLOCK
#define CUSED_ALLOC_SPINLOCK \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 14, 0))
#endif
#define CUSED_WALK_HAS_LOCK_ARG (LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0))
#define CUSED_PAGES_WITH_MDATA (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0))

#ifndef CUSED_KERNEL_RELEASE
#define CUSED_KERNEL_RELEASE "unknown"
#endif

struct cused_kproc {
	struct binder_alloc alloc;
	void *owner;
	struct mm_struct *mm;
	struct task_struct task;	/* the proc's task, for binder_alloc_init */
	bool dead;	/* a BUG fired in a call for this proc: its allocator is not called again */
	/* The vma's start, which the mmap handler copies into the file's base address
	 * (alloc->buffer in 6.1 and 6.12, alloc->vm_start in 7.2): the trace's offsets are from it. */
	unsigned long vm_start;
};

/* ---- the version's layouts ---- */

#if CUSED_ALLOC_SPINLOCK
static void alloc_lock(struct binder_alloc *alloc) { spin_lock(&alloc->lock); }
static void alloc_unlock(struct binder_alloc *alloc) { spin_unlock(&alloc->lock); }
static void alloc_lock_destroy(struct binder_alloc *alloc) { cused_spin_destroy(&alloc->lock); }
#else
static void alloc_lock(struct binder_alloc *alloc) { mutex_lock(&alloc->mutex); }
static void alloc_unlock(struct binder_alloc *alloc) { mutex_unlock(&alloc->mutex); }
static void alloc_lock_destroy(struct binder_alloc *alloc) { cused_mutex_destroy(&alloc->mutex); }
#endif

void *cused_glue_owner_of_alloc(const void *alloc)
{
	return container_of(alloc, struct cused_kproc, alloc)->owner;
}

#if CUSED_PAGES_WITH_MDATA
void cused_glue_lru_item(struct list_head *item, void **owner, size_t *index)
{
	struct binder_shrinker_mdata *mdata = container_of(item, struct binder_shrinker_mdata, lru);
	*owner = cused_glue_owner_of_alloc(mdata->alloc);
	*index = mdata->page_index;
}

static struct list_head *lru_item_of(struct binder_alloc *alloc, size_t index)
{
	struct page *page = smp_load_acquire(&alloc->pages[index]);
	return page ? page_to_lru(page) : NULL;
}
#else
void cused_glue_lru_item(struct list_head *item, void **owner, size_t *index)
{
	struct binder_lru_page *page = container_of(item, struct binder_lru_page, lru);
	*owner = cused_glue_owner_of_alloc(page->alloc);
	*index = (size_t)(page - page->alloc->pages);
}

static struct list_head *lru_item_of(struct binder_alloc *alloc, size_t index)
{
	return alloc->pages ? &alloc->pages[index].lru : NULL;
}
#endif

/* ---- calls as a task ---- */

/* The task a call runs as: thread group `pid` in the proc's address space. The call catches a
 * BUG of the file (runtime.h): the caller then fails the request (oopsed). */
struct as_task {
	struct task_struct task;
	struct task_struct *saved;
	struct cused_oops_frame oops;
};

static void enter(struct as_task *as, struct cused_kproc *proc, int pid)
{
	as->task.pid = pid;
	as->task.tgid = pid;
	as->task.group_leader = &as->task;
	as->task.mm = proc ? proc->mm : NULL;
	as->saved = current;
	current = &as->task;
	cused_oops_catch(&as->oops);
}

static void leave(struct as_task *as, const char *entry)
{
	cused_oops_release(&as->oops);
	if (cused_runtime_held_locks()) {
		char text[160];
		snprintf(text, sizeof(text), "%s returned holding %d lock(s), first %s", entry,
			 cused_runtime_held_locks(), cused_runtime_held_name(0));
		cused_rt->report(cused_runtime_owner(), CUSED_KREPORT_LOCK_LEAK, text);
	}
	current = as->saved;
}

/* A BUG abandoned the call (after `setjmp(as->oops.env)` answered nonzero): the kernel would
 * have killed the calling task and left the proc's allocator locked for good, so every later
 * call on it would hang. cused releases what the call held and marks the allocator dead: the
 * caller fails this request and every later one for the proc, and the daemon serves the other
 * procs on (docs/kernel-designs.md, "The kernel's debug checks"). */
static void oopsed(struct as_task *as, struct cused_kproc *proc)
{
	cused_oops_unwind(&as->oops);
	current = as->saved;
	if (proc)
		__atomic_store_n(&proc->dead, true, __ATOMIC_RELEASE);
}

static bool dead(const struct cused_kproc *proc)
{
	return __atomic_load_n(&proc->dead, __ATOMIC_ACQUIRE);
}

/* ---- the ABI ---- */

static int glue_init(const struct cused_krt *rt)
{
	struct as_task as;
	int ret;

	cused_rt = rt;
	enter(&as, NULL, 0);
	if (setjmp(as.oops.env)) {
		oopsed(&as, NULL);
		return -EIO;
	}
	ret = binder_alloc_shrinker_init();
	leave(&as, "binder_alloc_shrinker_init");
	return ret;
}

/* binder_alloc_init as the proc's task; a BUG in it leaves the proc dead from the start. */
static void init_alloc(struct cused_kproc *proc, int pid)
{
	struct as_task as;

	enter(&as, proc, pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		return;
	}
	binder_alloc_init(&proc->alloc);
	leave(&as, "binder_alloc_init");
}

static struct cused_kproc *glue_proc_new(void *owner, int pid, size_t pages)
{
	struct cused_kproc *proc = calloc(1, sizeof(*proc));

	(void)pages;
	if (!proc)
		return NULL;
	proc->owner = owner;
	proc->mm = cused_mm_new(owner);
	if (!proc->mm) {
		free(proc);
		return NULL;
	}
	init_alloc(proc, pid);
	return proc;
}

static int glue_mmap(struct cused_kproc *proc, unsigned long vm_start, size_t length)
{
	struct vm_area_struct *vma;
	struct as_task as;
	int ret;

	if (dead(proc))
		return -ESRCH;
	vma = cused_vma_new(proc->mm, vm_start, length);
	if (!vma)
		return -ENOMEM;
	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		return -ESRCH;	/* the vma stays the mm's; munmap takes it */
	}
	mmap_write_lock(proc->mm);
	if (proc->mm->cused_vma) {
		/* A second mapping while the first is there: the handler's answer, without it. */
		mmap_write_unlock(proc->mm);
		leave(&as, "mmap");
		cused_vma_free(vma);
		return -EBUSY;
	}
	pthread_mutex_lock(proc->mm->cused_vma_ptr_lock);
	proc->mm->cused_vma = vma;
	pthread_mutex_unlock(proc->mm->cused_vma_ptr_lock);
	mmap_write_unlock(proc->mm);
	proc->vm_start = vm_start;
	/* binder_mmap calls the handler with the mmap lock held for writing. */
	mmap_write_lock(proc->mm);
	ret = binder_alloc_mmap_handler(&proc->alloc, vma);
	mmap_write_unlock(proc->mm);
	leave(&as, "binder_alloc_mmap_handler");
	if (ret)
		cused_vma_unmap(proc->mm);
	return ret;
}

static void glue_munmap(struct cused_kproc *proc)
{
	struct as_task as;

	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		cused_vma_unmap(proc->mm);
		return;
	}
	if (!dead(proc))
		binder_alloc_vma_close(&proc->alloc);
	cused_vma_unmap(proc->mm);
	leave(&as, "binder_alloc_vma_close");
}

static void glue_release(struct cused_kproc *proc)
{
	struct mm_struct *mm = proc->mm;
	struct as_task as;

	glue_munmap(proc);
	mmgrab(mm);	/* for the leak check in glue_free, after the release drops the file's */
	mmput(mm);	/* the client's address space is gone */
	if (dead(proc))
		return;	/* after a BUG the file's state is not to be trusted: glue_free */
	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		return;
	}
	binder_alloc_deferred_release(&proc->alloc);
	leave(&as, "binder_alloc_deferred_release");
}

/* A shrinker that isolated one of the proc's pages before the release keeps that page (and the
 * file's mm reference) until it has freed it, as in the kernel: only once no reclaim is in flight
 * does a page still accounted to the mm mean a leak. */
static void glue_free(struct cused_kproc *proc)
{
	struct mm_struct *mm = proc->mm;
	long leaked;

	alloc_lock_destroy(&proc->alloc);
	if (dead(proc)) {
		/* Its buffers and pages are left, as a kernel leaves an oopsed task's (its mm
		 * reference too). */
		free(proc);
		return;
	}
	leaked = __atomic_load_n(&mm->cused_pages, __ATOMIC_ACQUIRE);
	if (leaked) {
		char text[256];
		snprintf(text, sizeof(text),
			 "%ld page(s) still referenced after binder_alloc_deferred_release "
			 "(vm_insert_page answered -EBUSY %ld time(s), get_user_pages_remote "
			 "returned %ld page(s))",
			 leaked, mm->cused_busy_inserts, mm->cused_remote_gets);
		cused_rt->report(proc->owner, CUSED_KREPORT_LEAK, text);
	}
	mmdrop(mm);
	free(proc);
}

static size_t sanitized(size_t data, size_t offsets, size_t extra)
{
	size_t total = ALIGN(data, sizeof(void *)) + ALIGN(offsets, sizeof(void *)) +
		       ALIGN(extra, sizeof(void *));
	return total < sizeof(void *) ? sizeof(void *) : total;
}

static struct cused_kbuf *glue_new_buf(struct cused_kproc *proc, size_t data_size,
				       size_t offsets_size, size_t extra_buffers_size,
				       int is_async, int pid, int *error)
{
	struct binder_buffer *buffer;
	struct as_task as;

	if (dead(proc)) {
		*error = -ESRCH;	/* as binder_alloc_new_buf answers for a proc without a vma */
		return NULL;
	}
	enter(&as, proc, pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		*error = -ESRCH;
		return NULL;
	}
#if CUSED_NEW_BUF_HAS_PID
	buffer = binder_alloc_new_buf(&proc->alloc, data_size, offsets_size, extra_buffers_size,
				      is_async, pid);
#else
	buffer = binder_alloc_new_buf(&proc->alloc, data_size, offsets_size, extra_buffers_size,
				      is_async);
#endif
	leave(&as, "binder_alloc_new_buf");
	if (IS_ERR(buffer)) {
		*error = (int)PTR_ERR(buffer);
		return NULL;
	}
	*error = 0;
	return (struct cused_kbuf *)buffer;
}

static struct cused_kbuf *glue_prepare_to_free(struct cused_kproc *proc, unsigned long user_ptr,
					       int *error)
{
	struct binder_buffer *buffer;
	struct as_task as;

	if (dead(proc)) {
		*error = -ENOENT;
		return NULL;
	}
	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		*error = -ENOENT;
		return NULL;
	}
	buffer = binder_alloc_prepare_to_free(&proc->alloc, user_ptr);
	leave(&as, "binder_alloc_prepare_to_free");
	if (IS_ERR_OR_NULL(buffer)) {
		*error = buffer ? (int)PTR_ERR(buffer) : -ENOENT;
		return NULL;
	}
	*error = 0;
	return (struct cused_kbuf *)buffer;
}

static void glue_free_buf(struct cused_kproc *proc, struct cused_kbuf *buf)
{
	struct as_task as;

	if (dead(proc))
		return;
	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		return;
	}
	binder_alloc_free_buf(&proc->alloc, (struct binder_buffer *)buf);
	leave(&as, "binder_alloc_free_buf");
}

static int glue_copy_to_buffer(struct cused_kproc *proc, struct cused_kbuf *buf, size_t offset,
			       const void *src, size_t bytes)
{
	if (dead(proc))
		return -EFAULT;
	return binder_alloc_copy_to_buffer(&proc->alloc, (struct binder_buffer *)buf, offset,
					   (void *)src, bytes);
}

static int glue_copy_from_buffer(struct cused_kproc *proc, struct cused_kbuf *buf, size_t offset,
				 void *dst, size_t bytes)
{
	if (dead(proc))
		return -EFAULT;
	return binder_alloc_copy_from_buffer(&proc->alloc, dst, (struct binder_buffer *)buf, offset,
					     bytes);
}

static void glue_buf_info(struct cused_kproc *proc, const struct cused_kbuf *buf,
			  struct cused_kbuf_info *info)
{
	const struct binder_buffer *buffer = (const struct binder_buffer *)buf;

	(void)proc;
	info->user_data = (unsigned long)buffer->user_data;
	info->data_size = buffer->data_size;
	info->offsets_size = buffer->offsets_size;
	info->extra_buffers_size = buffer->extra_buffers_size;
	/* An allocated buffer spans exactly its sanitized size: the file splits off the rest. */
	info->size = sanitized(buffer->data_size, buffer->offsets_size, buffer->extra_buffers_size);
	info->pid = buffer->pid;
	info->debug_id = buffer->debug_id;
	info->async_transaction = buffer->async_transaction;
	info->oneway_spam_suspect = buffer->oneway_spam_suspect;
	info->clear_on_free = buffer->clear_on_free;
	info->allow_user_free = buffer->allow_user_free;
	info->cookie = (void *)buffer->target_node;
}

static void glue_buf_set(struct cused_kproc *proc, struct cused_kbuf *buf,
			 enum cused_kbuf_field field, uint32_t value)
{
	struct binder_buffer *buffer = (struct binder_buffer *)buf;

	if (dead(proc))
		return;
	alloc_lock(&proc->alloc);
	switch (field) {
	case CUSED_KBUF_DEBUG_ID:
		buffer->debug_id = value;
		break;
	case CUSED_KBUF_CLEAR_ON_FREE:
		buffer->clear_on_free = !!value;
		break;
	case CUSED_KBUF_ALLOW_USER_FREE:
		buffer->allow_user_free = !!value;
		break;
	}
	alloc_unlock(&proc->alloc);
}

/* binder.c's pointer from a buffer to its node carries cused's handle of the buffer: the file
 * never reads it. */
static void glue_buf_set_cookie(struct cused_kbuf *buf, void *cookie)
{
	((struct binder_buffer *)buf)->target_node = cookie;
}

static int glue_allocated_count(struct cused_kproc *proc)
{
	if (dead(proc))
		return 0;
	return binder_alloc_get_allocated_count(&proc->alloc);
}

static size_t glue_free_async_space(struct cused_kproc *proc)
{
	if (dead(proc))
		return 0;
	return binder_alloc_get_free_async_space(&proc->alloc);
}

static void glue_for_each_allocated(struct cused_kproc *proc,
				    void (*visit)(void *ctx, const struct cused_kbuf *buf),
				    void *ctx)
{
	struct as_task as;

	if (dead(proc))
		return;
	enter(&as, proc, proc->alloc.pid);
	if (setjmp(as.oops.env)) {
		oopsed(&as, proc);
		return;
	}
	alloc_lock(&proc->alloc);
	for (struct rb_node *n = rb_first(&proc->alloc.allocated_buffers); n; n = rb_next(n))
		visit(ctx, (const struct cused_kbuf *)rb_entry(n, struct binder_buffer, rb_node));
	alloc_unlock(&proc->alloc);
	leave(&as, "for_each_allocated");
}

static void glue_print_pages(struct cused_kproc *proc, void (*emit)(void *, const char *),
			     void *ctx)
{
	struct seq_file m = { emit, ctx };
	if (dead(proc))
		return;
	binder_alloc_print_pages(&m, &proc->alloc);
}

static void glue_print_allocated(struct cused_kproc *proc, void (*emit)(void *, const char *),
				 void *ctx)
{
	struct seq_file m = { emit, ctx };
	if (dead(proc))
		return;
	binder_alloc_print_allocated(&m, &proc->alloc);
}

static size_t glue_pages_high(struct cused_kproc *proc)
{
	return __atomic_load_n(&proc->alloc.pages_high, __ATOMIC_RELAXED);
}

/* The shrinker's visit of one page: the file's own callback, as list_lru_walk calls it, with
 * the LRU's lock held; the walk takes the lock back when the callback returns without it. */
static int glue_reclaim_page(struct cused_kproc *proc, size_t index)
{
	struct list_lru *lru = cused_file_lru();
	struct list_head *item = lru_item_of(&proc->alloc, index);
	enum lru_status status;
	struct as_task as;

	if (!lru || !item || dead(proc))
		return 0;
	enter(&as, NULL, 0);	/* the shrinker runs as a kernel thread: no mm */
	if (setjmp(as.oops.env)) {
		/* The walk's LRU lock stays held (cused's); the file may have dropped it. */
		oopsed(&as, proc);
		if (!cused_spin_held(&lru->one.lock))
			spin_lock(&lru->one.lock);
		cused_spin_note_released(&lru->one.lock);
		cused_runtime_charge(NULL);
		return 0;
	}
	cused_runtime_charge(proc->owner);	/* what its checks report is this proc's */
	/* The walk holds the LRU lock: record it as this thread's. */
	cused_spin_note_held(&lru->one.lock, "list_lru_walk (cused's shrinker)");
#if CUSED_WALK_HAS_LOCK_ARG
	status = binder_alloc_free_page(item, &lru->one, &lru->one.lock, NULL);
#else
	status = binder_alloc_free_page(item, &lru->one, NULL);
#endif
	if (!cused_spin_held(&lru->one.lock))
		spin_lock(&lru->one.lock);
	cused_spin_note_released(&lru->one.lock);
	leave(&as, "binder_alloc_free_page");
	cused_runtime_charge(NULL);
	return status == LRU_REMOVED || status == LRU_REMOVED_RETRY;
}

static unsigned long glue_shrink_count(void)
{
	struct shrinker *shrinker = cused_file_shrinker();
	struct shrink_control sc = { 0, 0 };

	return shrinker && shrinker->count_objects ? shrinker->count_objects(shrinker, &sc) : 0;
}

static const struct cused_kabi abi = {
	.abi_version = CUSED_KABI_VERSION,
	.kernel_version = CUSED_KERNEL_RELEASE,
	.init = glue_init,
	.proc_new = glue_proc_new,
	.mmap = glue_mmap,
	.munmap = glue_munmap,
	.release = glue_release,
	.free = glue_free,
	.new_buf = glue_new_buf,
	.prepare_to_free = glue_prepare_to_free,
	.free_buf = glue_free_buf,
	.copy_to_buffer = glue_copy_to_buffer,
	.copy_from_buffer = glue_copy_from_buffer,
	.buf_info = glue_buf_info,
	.buf_set = glue_buf_set,
	.buf_set_cookie = glue_buf_set_cookie,
	.allocated_count = glue_allocated_count,
	.free_async_space = glue_free_async_space,
	.for_each_allocated = glue_for_each_allocated,
	.print_pages = glue_print_pages,
	.print_allocated = glue_print_allocated,
	.pages_high = glue_pages_high,
	.reclaim_page = glue_reclaim_page,
	.shrink_count = glue_shrink_count,
};

__attribute__((visibility("default"))) const struct cused_kabi *cused_kabi_get(void)
{
	return &abi;
}

/* ---- trace ---- */

/* binder_update_page_range's fields as its TP_fast_assign computes them: the offset from the
 * mapping's start, and end - start in unsigned arithmetic. */
void cused_trace_page_range(const void *alloc, int allocate, unsigned long start,
			    unsigned long end)
{
	const struct cused_kproc *proc = container_of(alloc, struct cused_kproc, alloc);

	cused_rt->trace_range(proc->owner, allocate, start - proc->vm_start, end - start);
}

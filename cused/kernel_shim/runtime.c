// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel runtime behind cused_kernel_api.h: what binder_alloc.c calls, done in userspace
 * with cused's locks, pages and LRU (through struct cused_krt) and the kernel's debug checks
 * (CONFIG_DEBUG_ATOMIC_SLEEP, WARN_ON/BUG_ON, pages leaked at release). Built into each kernel
 * design's object with the tree's binder_alloc.c and glue.c (docs/kernel-designs.md).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>

#include "cused_kernel_api.h"
#include "cused_kernel_abi.h"
#include "lockdep.h"
#include "runtime.h"

const struct cused_krt *cused_rt;
__thread struct task_struct *cused_current_task;

/* ---- the calling thread's held locks: the atomic-context, lock-leak and lock-order checks ---- */

#define HELD_MAX 16
static __thread struct cused_held_lock held[HELD_MAX];
static __thread int held_count;
static __thread int spin_depth;

static void held_push(const struct cused_held_lock *taken)
{
	if (cused_lockdep_enabled())
		cused_lockdep_acquired(held, held_count < HELD_MAX ? held_count : HELD_MAX, taken);
	if (held_count < HELD_MAX)
		held[held_count] = *taken;
	held_count++;
	spin_depth += taken->spin;
}

/* A lock taken at the file's `file`:`line`. `key` is its lockdep class (NULL: the lock). */
static void held_push_at(const void *lock, const void *key, const char *name, const char *file,
			 int line, enum cused_held_kind kind, bool trylock, void *impl)
{
	struct cused_held_lock taken = {
		.lock = lock, .key = key ? key : lock, .name = name, .file = file, .line = line,
		.spin = kind == CUSED_HELD_SPIN || (kind == CUSED_HELD_NOTED), .trylock = trylock,
		.kind = kind, .impl = impl,
	};
	held_push(&taken);
}

static void held_pop(const void *lock)
{
	int top = held_count < HELD_MAX ? held_count : HELD_MAX;
	for (int i = top - 1; i >= 0; i--) {
		if (held[i].lock != lock)
			continue;
		spin_depth -= held[i].spin;
		memmove(&held[i], &held[i + 1], (size_t)(top - i - 1) * sizeof(held[0]));
		held_count--;
		return;
	}
	held_count--;	/* beyond HELD_MAX: not recorded */
}

/* The allocator a kernel thread's call works for (the shrinker's visit of one proc's page): its
 * reports and log lines are that allocator's. */
static __thread void *charged_owner;

void cused_runtime_charge(void *owner)
{
	charged_owner = owner;
}

void *cused_runtime_owner(void)
{
	return current && current->mm ? current->mm->cused_owner : charged_owner;
}

void cused_runtime_report(enum cused_kreport kind, const char *text)
{
	cused_rt->report(cused_runtime_owner(), kind, text);
}

static void report(enum cused_kreport kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report(enum cused_kreport kind, const char *fmt, ...)
{
	char text[512];
	va_list args;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	cused_runtime_report(kind, text);
}

int cused_runtime_held_locks(void)
{
	return held_count;
}

const char *cused_runtime_held_name(int i)
{
	return i < held_count && i < HELD_MAX ? held[i].name : "?";
}

void cused_warn(const char *file, int line, const char *cond)
{
	report(CUSED_KREPORT_WARN, "WARNING: %s:%d: WARN_ON(%s)", file, line, cond);
}

/* ---- BUG: the oops, as the kernel's: the task is gone, everyone else carries on ---- */

static __thread struct cused_oops_frame *oops_frame;

void cused_oops_catch(struct cused_oops_frame *frame)
{
	frame->held_base = held_count;
	frame->prev = oops_frame;
	oops_frame = frame;
}

void cused_oops_release(struct cused_oops_frame *frame)
{
	oops_frame = frame->prev;
}

/* The locks the abandoned call took are released, last first, so that the daemon's other
 * threads are not stuck behind them (the kernel's would stay held by the dead task: every
 * later call into that proc's allocator would hang; cused fails them instead, glue.c). A lock
 * cused took for the file (the walk's LRU lock) stays with cused. */
void cused_oops_unwind(struct cused_oops_frame *frame)
{
	int top = held_count < HELD_MAX ? held_count : HELD_MAX;

	for (int i = top - 1; i >= frame->held_base; i--) {
		struct cused_held_lock lock = held[i];
		if (lock.kind == CUSED_HELD_NOTED)
			continue;
		held_pop(lock.lock);
		if (lock.kind == CUSED_HELD_RWLOCK_READ)
			cused_rt->rwlock_read_unlock(lock.impl);
		else if (lock.kind == CUSED_HELD_RWLOCK_WRITE)
			cused_rt->rwlock_write_unlock(lock.impl);
		else
			cused_rt->lock_unlock(lock.impl);
	}
	cused_oops_release(frame);
}

static __attribute__((noreturn)) void oops(void)
{
	if (!oops_frame)
		abort();	/* no call to abandon (a BUG outside the file's entry points) */
	longjmp(oops_frame->env, 1);
}

void cused_bug(const char *file, int line, const char *cond)
{
	report(CUSED_KREPORT_BUG, "kernel BUG at %s:%d: BUG_ON(%s)", file, line, cond);
	oops();
}

void cused_might_sleep(const char *file, int line, const char *what)
{
	if (!spin_depth)
		return;
	const char *lock = "?";
	int top = held_count < HELD_MAX ? held_count : HELD_MAX;
	for (int i = top - 1; i >= 0; i--)
		if (held[i].spin) {
			lock = held[i].name;
			break;
		}
	report(CUSED_KREPORT_ATOMIC_SLEEP,
	       "BUG: sleeping function called from invalid context at %s:%d: %s under spinlock %s",
	       file, line, what, lock);
}

/* ---- printk and seq_file ---- */

void cused_printk(int level, const char *fmt, ...)
{
	char line[512];
	va_list args;
	size_t n;

	va_start(args, fmt);
	vsnprintf(line, sizeof(line), fmt, args);
	va_end(args);
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[n - 1] = '\0';
	/* The file's pr_fmt puts the module's name first; cused's log adds its own prefix. */
	const char *text = line;
	if (!strncmp(text, KBUILD_MODNAME ": ", strlen(KBUILD_MODNAME ": ")))
		text += strlen(KBUILD_MODNAME ": ");
	cused_rt->log(cused_runtime_owner(), level, text);
}

void seq_printf(struct seq_file *m, const char *fmt, ...)
{
	char text[512];
	va_list args;

	va_start(args, fmt);
	vsnprintf(text, sizeof(text), fmt, args);
	va_end(args);
	m->emit(m->ctx, text);
}

/* ---- locks: cused's, with the calling thread's record ---- */

void cused_lock_init(void **impl, int kind, const char *name)
{
	*impl = cused_rt->lock_create(cused_runtime_owner(), kind ? CUSED_KLOCK_SPIN : CUSED_KLOCK_MUTEX,
				      name);
}

/* A lock defined statically (DEFINE_MUTEX) gets its cused lock at first use, as the allocator
 * of the task that first takes it made it: the tree's design, for its trace. */
static void *lock_impl(void **impl, int kind, const char *name)
{
	void *lock = __atomic_load_n(impl, __ATOMIC_ACQUIRE);
	if (lock)
		return lock;
	void *made = cused_rt->lock_create(cused_runtime_owner(),
					   kind ? CUSED_KLOCK_SPIN : CUSED_KLOCK_MUTEX, name);
	void *expected = NULL;
	if (__atomic_compare_exchange_n(impl, &expected, made, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return made;
	cused_rt->lock_destroy(made);
	return expected;
}

void cused_mutex_lock(struct mutex *lock, const char *file, int line)
{
	void *impl = lock_impl(&lock->impl, 0, lock->name);

	cused_might_sleep(file, line, "mutex_lock");
	cused_rt->lock_lock(impl);
	held_push_at(lock, lock->key, lock->name, file, line, CUSED_HELD_MUTEX, false, impl);
}

int cused_mutex_trylock(struct mutex *lock, const char *file, int line)
{
	void *impl = lock_impl(&lock->impl, 0, lock->name);

	if (!cused_rt->lock_trylock(impl))
		return 0;
	held_push_at(lock, lock->key, lock->name, file, line, CUSED_HELD_MUTEX, true, impl);
	return 1;
}

void cused_mutex_unlock(struct mutex *lock)
{
	held_pop(lock);
	cused_rt->lock_unlock(lock->impl);
}

void cused_mutex_destroy(struct mutex *lock)
{
	if (lock->impl)
		cused_rt->lock_destroy(lock->impl);
	lock->impl = NULL;
}

void cused_spin_lock(spinlock_t *lock, const char *file, int line)
{
	void *impl = lock_impl(&lock->impl, 1, lock->name);

	cused_rt->lock_lock(impl);
	held_push_at(lock, lock->key, lock->name, file, line, CUSED_HELD_SPIN, false, impl);
}

int cused_spin_trylock(spinlock_t *lock, const char *file, int line)
{
	void *impl = lock_impl(&lock->impl, 1, lock->name);

	if (!cused_rt->lock_trylock(impl))
		return 0;
	held_push_at(lock, lock->key, lock->name, file, line, CUSED_HELD_SPIN, true, impl);
	return 1;
}

void cused_spin_unlock(spinlock_t *lock)
{
	held_pop(lock);
	cused_rt->lock_unlock(lock->impl);
}

void cused_spin_destroy(spinlock_t *lock)
{
	if (lock->impl && lock->impl != cused_rt->lru_lock)
		cused_rt->lock_destroy(lock->impl);
	lock->impl = NULL;
}

/* A lock taken by cused for the file (the LRU lock a walk holds when it calls the file): held
 * as a trylock would be, since cused's walk takes it before any of the file's locks. */
void cused_spin_note_held(const spinlock_t *lock, const char *site)
{
	held_push_at(lock, lock->key, lock->name, site, 0, CUSED_HELD_NOTED, true, NULL);
}

void cused_spin_note_released(const spinlock_t *lock)
{
	held_pop(lock);
}

bool cused_spin_held(const spinlock_t *lock)
{
	int top = held_count < HELD_MAX ? held_count : HELD_MAX;
	for (int i = 0; i < top; i++)
		if (held[i].lock == lock)
			return true;
	return false;
}

/* ---- memory ---- */

void *cused_kmalloc(size_t size, gfp_t flags, const char *file, int line)
{
	if (flags & GFP_KERNEL)
		cused_might_sleep(file, line, "kmalloc(GFP_KERNEL)");
	return (flags & __GFP_ZERO) ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
}

void kfree(const void *ptr)
{
	free((void *)ptr);
}

/* ---- pages ---- */

struct page *cused_alloc_page(gfp_t flags, const char *file, int line)
{
	struct page *page;

	if (flags & GFP_KERNEL)
		cused_might_sleep(file, line, "alloc_page(GFP_KERNEL)");
	page = calloc(1, sizeof(*page));
	if (!page)
		return NULL;
	page->virt = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!page->virt) {
		free(page);
		return NULL;
	}
	memset(page->virt, 0, PAGE_SIZE);	/* __GFP_ZERO or not: never hand out old data */
	page->refcount = 1;
	/* Accounted to the mm for glue_free's leak check; the hold keeps the count alive until the
	 * page goes, which may be after the proc's release (a shrinker in flight frees it). */
	page->mm = current ? current->mm : NULL;
	if (page->mm) {
		mmgrab(page->mm);
		__atomic_add_fetch(&page->mm->cused_pages, 1, __ATOMIC_RELAXED);
	}
	return page;
}

void get_page(struct page *page)
{
	__atomic_add_fetch(&page->refcount, 1, __ATOMIC_RELAXED);
}

void put_page(struct page *page)
{
	int left = __atomic_sub_fetch(&page->refcount, 1, __ATOMIC_ACQ_REL);
	if (left > 0)
		return;
	if (left < 0) {
		report(CUSED_KREPORT_BUG, "BUG: page %p freed with refcount %d", (void *)page, left);
		oops();
	}
	/* The memory goes back: a memfd page is punched, a private page freed. */
	if (page->in_memfd)
		cused_rt->page_punch(page->owner, page->index);
	else
		free(page->virt);
	if (page->mm) {
		__atomic_sub_fetch(&page->mm->cused_pages, 1, __ATOMIC_RELAXED);
		mmdrop(page->mm);
	}
	free(page);
}

void __free_page(struct page *page)
{
	put_page(page);
}

/* ---- address spaces ---- */

/* The mmap lock and the per-VMA locks are cused's reader-writer locks (cused_krt.rwlock_*),
 * traced as lock=mmap and lock=vma. */

/* The lockdep classes of the locks every mm and vma has (one class each, as in the kernel). */
static const struct lock_class_key mmap_lock_class, vma_lock_class;

void cused_mmap_read_lock(struct mm_struct *mm, const char *file, int line)
{
	cused_might_sleep(file, line, "mmap_read_lock");
	cused_rt->rwlock_read_lock(mm->cused_mmap_lock);
	held_push_at(mm->cused_mmap_lock, &mmap_lock_class, "&mm->mmap_lock", file, line,
		     CUSED_HELD_RWLOCK_READ, false, mm->cused_mmap_lock);
}

bool cused_mmap_read_trylock(struct mm_struct *mm, const char *file, int line)
{
	if (!cused_rt->rwlock_read_trylock(mm->cused_mmap_lock))
		return false;
	held_push_at(mm->cused_mmap_lock, &mmap_lock_class, "&mm->mmap_lock", file, line,
		     CUSED_HELD_RWLOCK_READ, true, mm->cused_mmap_lock);
	return true;
}

void mmap_read_unlock(struct mm_struct *mm)
{
	held_pop(mm->cused_mmap_lock);
	cused_rt->rwlock_read_unlock(mm->cused_mmap_lock);
}

void cused_mmap_write_lock(struct mm_struct *mm, const char *file, int line)
{
	cused_might_sleep(file, line, "mmap_write_lock");
	cused_rt->rwlock_write_lock(mm->cused_mmap_lock);
	held_push_at(mm->cused_mmap_lock, &mmap_lock_class, "&mm->mmap_lock", file, line,
		     CUSED_HELD_RWLOCK_WRITE, false, mm->cused_mmap_lock);
}

void mmap_write_unlock(struct mm_struct *mm)
{
	held_pop(mm->cused_mmap_lock);
	cused_rt->rwlock_write_unlock(mm->cused_mmap_lock);
}

struct vm_area_struct *vma_lookup(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = mm->cused_vma;
	return vma && addr >= vma->vm_start && addr < vma->vm_end ? vma : NULL;
}

struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = mm->cused_vma;
	return vma && addr < vma->vm_end ? vma : NULL;
}

/* The per-VMA read lock, taken without the mmap lock: the vma pointer is read under the lock
 * that the unmap detaches it under (RCU's role), and the trylock fails while a writer holds or
 * waits for the vma (the kernel then falls back to the mmap lock). */
struct vm_area_struct *cused_lock_vma_under_rcu(struct mm_struct *mm, unsigned long addr,
					       const char *file, int line)
{
	struct vm_area_struct *vma;

	pthread_mutex_lock(mm->cused_vma_ptr_lock);
	vma = vma_lookup(mm, addr);
	if (vma && !cused_rt->rwlock_read_trylock(vma->cused_lock))
		vma = NULL;
	pthread_mutex_unlock(mm->cused_vma_ptr_lock);
	/* A trylock, as the kernel's vma_start_read is to lockdep. */
	if (vma)
		held_push_at(vma->cused_lock, &vma_lock_class, "vma->vm_lock", file, line,
			     CUSED_HELD_RWLOCK_READ, true, vma->cused_lock);
	return vma;
}

void vma_end_read(struct vm_area_struct *vma)
{
	held_pop(vma->cused_lock);
	cused_rt->rwlock_read_unlock(vma->cused_lock);
}

bool mmget_not_zero(struct mm_struct *mm)
{
	int users = __atomic_load_n(&mm->mm_users, __ATOMIC_RELAXED);
	while (users > 0)
		if (__atomic_compare_exchange_n(&mm->mm_users, &users, users + 1, true,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return true;
	return false;
}

void mmput(struct mm_struct *mm)
{
	/* The last user: the address space goes, and with it the users' hold on the mm. */
	if (!__atomic_sub_fetch(&mm->mm_users, 1, __ATOMIC_ACQ_REL))
		mmdrop(mm);
}

void mmput_async(struct mm_struct *mm)
{
	mmput(mm);
}

void mmgrab(struct mm_struct *mm)
{
	__atomic_add_fetch(&mm->mm_count, 1, __ATOMIC_RELAXED);
}

void mmdrop(struct mm_struct *mm)
{
	if (__atomic_sub_fetch(&mm->mm_count, 1, __ATOMIC_ACQ_REL))
		return;
	cused_rt->rwlock_destroy(mm->cused_mmap_lock);
	pthread_mutex_destroy(mm->cused_vma_ptr_lock);
	free(mm->cused_vma_ptr_lock);
	free(mm);
}

struct mm_struct *cused_mm_new(void *owner)
{
	struct mm_struct *mm = calloc(1, sizeof(*mm));
	if (!mm)
		return NULL;
	mm->cused_mmap_lock = cused_rt->rwlock_create(owner, "&mm->mmap_lock");
	mm->cused_vma_ptr_lock = malloc(sizeof(pthread_mutex_t));
	if (!mm->cused_mmap_lock || !mm->cused_vma_ptr_lock) {
		if (mm->cused_mmap_lock)
			cused_rt->rwlock_destroy(mm->cused_mmap_lock);
		free(mm->cused_vma_ptr_lock);
		free(mm);
		return NULL;
	}
	pthread_mutex_init(mm->cused_vma_ptr_lock, NULL);
	mm->mm_users = 1;	/* the client's address space */
	mm->mm_count = 1;	/* held by its users */
	mm->cused_owner = owner;
	return mm;
}

void cused_vma_free(struct vm_area_struct *vma)
{
	if (vma->cused_lock)
		cused_rt->rwlock_destroy(vma->cused_lock);
	free(vma->cused_ptes);
	free(vma);
}

struct vm_area_struct *cused_vma_new(struct mm_struct *mm, unsigned long start, size_t length)
{
	struct vm_area_struct *vma = calloc(1, sizeof(*vma));
	if (!vma)
		return NULL;
	vma->cused_npages = length / PAGE_SIZE;
	vma->cused_ptes = calloc(vma->cused_npages ? vma->cused_npages : 1, sizeof(struct page *));
	vma->cused_lock = cused_rt->rwlock_create(mm->cused_owner, "vma->vm_lock");
	if (!vma->cused_ptes || !vma->cused_lock) {
		cused_vma_free(vma);
		return NULL;
	}
	vma->vm_start = start;
	vma->vm_end = start + length;
	vma->vm_mm = mm;
	return vma;
}

static pthread_mutex_t pte_lock = PTHREAD_MUTEX_INITIALIZER;	/* the page table lock */

/* Maps `page` at `addr`: the memfd page at that offset becomes present, the struct page's
 * contents move into it and the memfd page is the struct page's memory from then on. The
 * mapping holds a reference, as the kernel's does. -EBUSY when a page is mapped there. */
int cused_vm_insert_page(struct vm_area_struct *vma, unsigned long addr, struct page *page,
			 const char *file, int line)
{
	size_t index = (addr - vma->vm_start) / PAGE_SIZE;
	void *owner = vma->vm_mm->cused_owner;
	int ret;

	cused_might_sleep(file, line, "vm_insert_page");
	if (addr < vma->vm_start || index >= vma->cused_npages)
		return -EFAULT;
	pthread_mutex_lock(&pte_lock);
	if (vma->cused_ptes[index]) {
		pthread_mutex_unlock(&pte_lock);
		__atomic_add_fetch(&vma->vm_mm->cused_busy_inserts, 1, __ATOMIC_RELAXED);
		return -EBUSY;
	}
	if (page->in_memfd) {
		pthread_mutex_unlock(&pte_lock);
		return -EINVAL;	/* a page of another mapping: binder never does this */
	}
	ret = cused_rt->page_install(owner, index);
	if (ret) {
		pthread_mutex_unlock(&pte_lock);
		return ret;
	}
	void *memfd_page = cused_rt->page_address(owner, index);
	memcpy(memfd_page, page->virt, PAGE_SIZE);
	free(page->virt);
	page->virt = memfd_page;
	page->in_memfd = true;
	page->owner = owner;
	page->index = index;
	get_page(page);
	vma->cused_ptes[index] = page;
	pthread_mutex_unlock(&pte_lock);
	return 0;
}

/* Takes the page mapped at `index` out of the page table (pte_lock held); the caller then
 * drops the mapping's reference with unmapped() outside the lock. */
static struct page *unmap_pte(struct vm_area_struct *vma, size_t index)
{
	struct page *page = vma->cused_ptes[index];
	vma->cused_ptes[index] = NULL;
	return page;
}

/* A zapped page the kernel still holds keeps its contents in private memory, and the client's
 * memfd page is punched, so the client sees the hole at once, as after the kernel's zap. A page
 * nobody else holds is freed (punched) by the put. */
static void zapped(struct page *page)
{
	if (__atomic_load_n(&page->refcount, __ATOMIC_ACQUIRE) > 1) {
		void *copy = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
		if (copy) {
			memcpy(copy, page->virt, PAGE_SIZE);
			page->virt = copy;
			page->in_memfd = false;
			cused_rt->page_punch(page->owner, page->index);
		}
	}
	put_page(page);
}

void cused_zap(struct vm_area_struct *vma, unsigned long addr, unsigned long size,
	       const char *file, int line)
{
	cused_might_sleep(file, line, "zap");
	if (addr < vma->vm_start)
		return;
	for (unsigned long a = addr; a < addr + size && a < vma->vm_end; a += PAGE_SIZE) {
		size_t index = (a - vma->vm_start) / PAGE_SIZE;
		struct page *page = NULL;
		if (index >= vma->cused_npages)
			break;
		pthread_mutex_lock(&pte_lock);
		page = unmap_pte(vma, index);
		pthread_mutex_unlock(&pte_lock);
		if (page)
			zapped(page);
	}
}

/* munmap: the vma goes. The pages stay the kernel's (binder_alloc still holds them) and keep
 * their memfd memory until freed, but the client no longer maps them. */
void cused_vma_unmap(struct mm_struct *mm)
{
	struct vm_area_struct *vma;

	mmap_write_lock(mm);
	vma = mm->cused_vma;
	if (vma) {
		cused_rt->rwlock_write_lock(vma->cused_lock);
		pthread_mutex_lock(mm->cused_vma_ptr_lock);
		mm->cused_vma = NULL;
		pthread_mutex_unlock(mm->cused_vma_ptr_lock);
		for (size_t i = 0; i < vma->cused_npages; i++) {
			pthread_mutex_lock(&pte_lock);
			struct page *page = unmap_pte(vma, i);
			pthread_mutex_unlock(&pte_lock);
			if (page)
				put_page(page);
		}
		cused_rt->rwlock_write_unlock(vma->cused_lock);
	}
	mmap_write_unlock(mm);
	if (vma)
		cused_vma_free(vma);
}

long get_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked)
{
	long got = 0;

	(void)gup_flags;
	(void)locked;
	pthread_mutex_lock(&pte_lock);
	for (unsigned long i = 0; i < nr_pages; i++) {
		unsigned long addr = start + i * PAGE_SIZE;
		struct vm_area_struct *vma = vma_lookup(mm, addr);
		struct page *page;
		if (!vma)
			break;
		page = vma->cused_ptes[(addr - vma->vm_start) / PAGE_SIZE];
		if (!page)
			break;	/* FOLL_NOFAULT: no fault-in */
		get_page(page);
		pages[i] = page;
		got++;
		__atomic_add_fetch(&mm->cused_remote_gets, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&pte_lock);
	return got ? got : -EFAULT;
}

/* ---- user memory: the sender's, read as cused's engine reads it ---- */

unsigned long cused_copy_from_user(void *to, const void *from, unsigned long n, const char *file,
				   int line)
{
	struct iovec local = { to, n };
	struct iovec remote = { (void *)from, n };
	ssize_t got;

	cused_might_sleep(file, line, "copy_from_user");
	if (!current)
		return n;
	got = process_vm_readv(current->tgid, &local, 1, &remote, 1, 0);
	return got < 0 ? n : n - (unsigned long)got;
}

/* ---- list_lru: cused's global page LRU ---- */

static struct list_lru *file_lru;	/* the file's own list_lru (binder_freelist) */
static const struct lock_class_key lru_lock_class;	/* list_lru's lock: one class */
static struct shrinker *file_shrinker;

struct list_lru *cused_file_lru(void)
{
	return file_lru;
}

struct shrinker *cused_file_shrinker(void)
{
	return file_shrinker;
}

int list_lru_init(struct list_lru *lru)
{
	INIT_LIST_HEAD(&lru->one.list);
	lru->one.nr_items = 0;
	lru->one.lock.impl = cused_rt->lru_lock;
	lru->one.lock.name = "&lru->lock";
	lru->one.lock.key = &lru_lock_class;
	file_lru = lru;
	return 0;
}

void list_lru_destroy(struct list_lru *lru)
{
	if (lru->one.nr_items)
		report(CUSED_KREPORT_WARN, "WARNING: list_lru destroyed with %ld items",
		       lru->one.nr_items);
	if (file_lru == lru)
		file_lru = NULL;
}

/* The order of the pages is cused's global LRU's (one per daemon, shared by every design and
 * every loaded tree, each with its own lock in tests); the file only asks whether its item is
 * on the list (list_empty), so an item on the LRU points at the list head without being linked
 * into a chain that items of other LRUs would share. */
static void on_lru(struct list_head *item, struct list_lru *lru)
{
	item->next = &lru->one.list;
	item->prev = &lru->one.list;
}

bool cused_list_lru_add(struct list_lru *lru, struct list_head *item, const char *file, int line)
{
	void *owner;
	size_t index;

	cused_glue_lru_item(item, &owner, &index);
	cused_rt->lru_select(owner);
	cused_spin_lock(&lru->one.lock, file, line);
	if (!list_empty(item)) {
		spin_unlock(&lru->one.lock);
		return false;
	}
	on_lru(item, lru);
	__atomic_add_fetch(&lru->one.nr_items, 1, __ATOMIC_RELAXED);
	cused_rt->lru_link(owner, index);
	spin_unlock(&lru->one.lock);
	return true;
}

bool cused_list_lru_del(struct list_lru *lru, struct list_head *item, const char *file, int line)
{
	void *owner;
	size_t index;

	cused_glue_lru_item(item, &owner, &index);
	cused_rt->lru_select(owner);
	cused_spin_lock(&lru->one.lock, file, line);
	if (list_empty(item)) {
		spin_unlock(&lru->one.lock);
		return false;
	}
	INIT_LIST_HEAD(item);
	__atomic_sub_fetch(&lru->one.nr_items, 1, __ATOMIC_RELAXED);
	cused_rt->lru_unlink(owner, index);
	spin_unlock(&lru->one.lock);
	return true;
}

void list_lru_isolate(struct list_lru_one *list, struct list_head *item)
{
	void *owner;
	size_t index;

	INIT_LIST_HEAD(item);
	__atomic_sub_fetch(&list->nr_items, 1, __ATOMIC_RELAXED);
	cused_glue_lru_item(item, &owner, &index);
	cused_rt->lru_isolate(owner, index);
}

unsigned long list_lru_count(struct list_lru *lru)
{
	return (unsigned long)__atomic_load_n(&lru->one.nr_items, __ATOMIC_RELAXED);
}

unsigned long cused_list_lru_walk_unused(void)
{
	report(CUSED_KREPORT_WARN, "WARNING: the file's own list_lru walk ran; cused's shrinker "
				   "walks its global LRU instead");
	return 0;
}

/* ---- the shrinker: cused's shrinker thread walks the global LRU; this records the file's ---- */

struct shrinker *shrinker_alloc(unsigned int flags, const char *fmt, ...)
{
	(void)flags;
	(void)fmt;
	return calloc(1, sizeof(struct shrinker));
}

void shrinker_register(struct shrinker *shrinker)
{
	file_shrinker = shrinker;
}

void shrinker_free(struct shrinker *shrinker)
{
	if (file_shrinker == shrinker)
		file_shrinker = NULL;
	free(shrinker);
}

int register_shrinker(struct shrinker *shrinker, const char *fmt, ...)
{
	(void)fmt;
	file_shrinker = shrinker;
	return 0;
}

void unregister_shrinker(struct shrinker *shrinker)
{
	if (file_shrinker == shrinker)
		file_shrinker = NULL;
}

/* ---- trace ---- */

void cused_trace_page(const void *alloc, int event, size_t page_index)
{
	cused_rt->trace(cused_glue_owner_of_alloc(alloc), (enum cused_ktrace)event, page_index);
}

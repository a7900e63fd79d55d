/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel API that drivers/android/binder_alloc.c (6.1 to 7.x) is written against, emulated
 * in userspace for cused's kernel designs (docs/kernel-designs.md). Every linux/... header the
 * file includes is a one-line forward to this one. Written from the kernel's documented
 * semantics, not from its sources.
 *
 * What maps to what:
 *   struct mutex       cused's policy mutex (lock_policy= applies); may sleep
 *   spinlock_t         cused's spinlock, held in a preempt-disabled section; a sleeping call
 *                      under it is reported (CONFIG_DEBUG_ATOMIC_SLEEP)
 *   mmap lock, per-VMA lock   reader-writer locks of this runtime (runtime.c)
 *   struct page        a page of memory; vm_insert_page makes the proc's memfd page at that
 *                      offset present, copies the page into it and makes the memfd page the
 *                      struct page's memory; zap punches it out of the memfd
 *   list_lru           cused's global page LRU, whose shrinker thread walks it
 *   current            the task cused serves: its thread group and the proc's mm
 * The kernel version is LINUX_VERSION_CODE (set by the build from the tree); the few calls whose
 * signature changed between 6.1 and 7.x follow it.
 */
#ifndef CUSED_KERNEL_API_H
#define CUSED_KERNEL_API_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef CUSED_LINUX_VERSION_CODE
#error "build with -DCUSED_LINUX_VERSION_CODE=KERNEL_VERSION(a,b,c) of the tree"
#endif
#define KERNEL_VERSION(a, b, c) (((a) << 16) + ((b) << 8) + ((c) > 255 ? 255 : (c)))
#define LINUX_VERSION_CODE CUSED_LINUX_VERSION_CODE

/* ---- types and compiler ---- */
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
typedef uint32_t __u32;
typedef uint64_t __u64;
typedef unsigned long pgoff_t;
typedef unsigned int gfp_t;

#define __user
#define __must_hold(x)
#define __acquires(x)
#define __releases(x)
#define __maybe_unused __attribute__((unused))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define fallthrough __attribute__((fallthrough))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))
#define __ALIGN_MASK(x, mask) (((x) + (mask)) & ~(mask))
#define ALIGN(x, a) __ALIGN_MASK(x, (__typeof__(x))(a) - 1)
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)

#define SZ_4M 0x00400000
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define PAGE_ALIGN(addr) ALIGN(addr, PAGE_SIZE)
#define PAGE_ALIGNED(addr) IS_ALIGNED((unsigned long)(addr), PAGE_SIZE)

/* Kconfig: IS_ENABLED(CONFIG_X) is 1 when the build defines CONFIG_X as 1 (or as y: -DCONFIG_X=1). */
#define __CUSED_ONE_1 0,
#define __cused_second(ignored, value, ...) value
#define __cused_defined3(junk) __cused_second(junk 1, 0, 0)
#define __cused_defined2(value) __cused_defined3(__CUSED_ONE_##value)
#define IS_ENABLED(option) __cused_defined2(option)
#define IS_BUILTIN(option) IS_ENABLED(option)

/* ---- errors as pointers ---- */
#define MAX_ERRNO 4095
#define IS_ERR_VALUE(x) ((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE((unsigned long)ptr); }
static inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }

/* ---- the debug checks (runtime.c reports them through cused) ---- */
void cused_warn(const char *file, int line, const char *cond);
__attribute__((noreturn)) void cused_bug(const char *file, int line, const char *cond);
void cused_might_sleep(const char *file, int line, const char *what);
#define WARN_ON(cond) \
	({ bool __c = !!(cond); if (unlikely(__c)) cused_warn(__FILE__, __LINE__, #cond); unlikely(__c); })
#define WARN_ON_ONCE(cond) WARN_ON(cond)
#define WARN(cond, ...) WARN_ON(cond)
#define BUG_ON(cond) do { if (unlikely(cond)) cused_bug(__FILE__, __LINE__, #cond); } while (0)
#define BUG() cused_bug(__FILE__, __LINE__, "BUG()")
#define might_sleep() cused_might_sleep(__FILE__, __LINE__, __func__)

/* ---- printk ---- */
#define KERN_ERR "3"
#define KERN_WARNING "4"
#define KERN_INFO "6"
#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif
void cused_printk(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_err(fmt, ...) cused_printk(3, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...) cused_printk(4, pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...) cused_printk(6, pr_fmt(fmt), ##__VA_ARGS__)
/* Rate limiting (ratelimit.h): cused logs every line, as its own designs do (the engine's
 * log sink is where lines are limited). */
#define pr_info_ratelimited(fmt, ...) pr_info(fmt, ##__VA_ARGS__)
#define pr_err_ratelimited(fmt, ...) pr_err(fmt, ##__VA_ARGS__)

/* ---- modules ---- */
#define module_param_named(name, value, type, perm)
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#define VISIBLE_IF_KUNIT
#define MODULE_LICENSE(x)

/* ---- lists (list.h) ---- */
struct list_head {
	struct list_head *next, *prev;
};
#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	list->next = list;
	list->prev = list;
}
static inline void __cused_list_link(struct list_head *entry, struct list_head *prev,
				     struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	prev->next = entry;
}
static inline void list_add(struct list_head *entry, struct list_head *head)
{
	__cused_list_link(entry, head, head->next);
}
static inline void list_add_tail(struct list_head *entry, struct list_head *head)
{
	__cused_list_link(entry, head->prev, head);
}
static inline void __cused_list_unlink(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	entry->prev->next = entry->next;
}
static inline void list_del(struct list_head *entry)
{
	__cused_list_unlink(entry);
	entry->next = NULL;
	entry->prev = NULL;
}
static inline void list_del_init(struct list_head *entry)
{
	__cused_list_unlink(entry);
	INIT_LIST_HEAD(entry);
}
static inline bool list_empty(const struct list_head *head) { return head->next == head; }
static inline bool list_is_last(const struct list_head *entry, const struct list_head *head)
{
	return entry->next == head;
}
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)

/* ---- red-black trees: tools/lib/rbtree.c of the same tree, built beside the file ---- */
struct rb_node {
	unsigned long __rb_parent_color;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
} __attribute__((aligned(sizeof(long))));
struct rb_root {
	struct rb_node *rb_node;
};
#define RB_ROOT ((struct rb_root){ NULL })
#define rb_entry(ptr, type, member) container_of(ptr, type, member)
void rb_insert_color(struct rb_node *node, struct rb_root *root);
void rb_erase(struct rb_node *node, struct rb_root *root);
struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **link)
{
	node->__rb_parent_color = (unsigned long)parent;
	node->rb_left = node->rb_right = NULL;
	*link = node;
}

/* ---- locks ---- */
/* Each lock carries its lockdep class (lockdep.c): the static key of the site that initialized
 * it (mutex_init, spin_lock_init), as the kernel's lockdep classes locks; a statically defined
 * lock (DEFINE_MUTEX) is its own class. */
struct mutex {
	void *impl;		/* cused's lock, made at mutex_init or at first use */
	const char *name;
	const void *key;	/* the lockdep class; NULL: the lock itself */
};
typedef struct {
	void *impl;
	const char *name;
	const void *key;
} spinlock_t;
struct lock_class_key {
	char unused;
};
void cused_lock_init(void **impl, int kind, const char *name);
void cused_mutex_lock(struct mutex *lock, const char *file, int line);
int cused_mutex_trylock(struct mutex *lock, const char *file, int line);
void cused_mutex_unlock(struct mutex *lock);
void cused_mutex_destroy(struct mutex *lock);
void cused_spin_lock(spinlock_t *lock, const char *file, int line);
int cused_spin_trylock(spinlock_t *lock, const char *file, int line);
void cused_spin_unlock(spinlock_t *lock);
void cused_spin_destroy(spinlock_t *lock);
#define DEFINE_MUTEX(n) struct mutex n = { NULL, #n, NULL }
#define mutex_init(m) \
	do { \
		static struct lock_class_key __key; \
		(m)->key = &__key; \
		cused_lock_init(&(m)->impl, 0, ((m)->name = #m)); \
	} while (0)
#define mutex_lock(m) cused_mutex_lock((m), __FILE__, __LINE__)
#define mutex_trylock(m) cused_mutex_trylock((m), __FILE__, __LINE__)
#define mutex_unlock(m) cused_mutex_unlock(m)
#define spin_lock_init(l) \
	do { \
		static struct lock_class_key __key; \
		(l)->key = &__key; \
		cused_lock_init(&(l)->impl, 1, ((l)->name = #l)); \
	} while (0)
#define spin_lock(l) cused_spin_lock((l), __FILE__, __LINE__)
#define spin_trylock(l) cused_spin_trylock((l), __FILE__, __LINE__)
#define spin_unlock(l) cused_spin_unlock(l)

/* Scope-based locking (cleanup.h): guard(mutex)(&m) holds m to the end of the scope. */
typedef struct mutex *class_mutex_t;
static inline void class_mutex_destructor(class_mutex_t *lock) { mutex_unlock(*lock); }
static inline class_mutex_t cused_class_mutex_constructor(struct mutex *lock, const char *file,
							   int line)
{
	cused_mutex_lock(lock, file, line);
	return lock;
}
/* The constructor is a macro so that the lock's site is the guard's line in the file. */
#define class_mutex_constructor(lock) cused_class_mutex_constructor((lock), __FILE__, __LINE__)
typedef spinlock_t *class_spinlock_t;
static inline void class_spinlock_destructor(class_spinlock_t *lock) { spin_unlock(*lock); }
static inline class_spinlock_t cused_class_spinlock_constructor(spinlock_t *lock,
								 const char *file, int line)
{
	cused_spin_lock(lock, file, line);
	return lock;
}
#define class_spinlock_constructor(lock) \
	cused_class_spinlock_constructor((lock), __FILE__, __LINE__)
#define __CUSED_UNIQUE(prefix, n) __CUSED_UNIQUE2(prefix, n)
#define __CUSED_UNIQUE2(prefix, n) prefix##n
#define guard(name) \
	class_##name##_t __CUSED_UNIQUE(__guard, __COUNTER__) \
		__attribute__((cleanup(class_##name##_destructor))) = class_##name##_constructor
#define scoped_guard(name, arg) \
	for (class_##name##_t __scope __attribute__((cleanup(class_##name##_destructor))) = \
		     class_##name##_constructor(arg), *__done = NULL; !__done; \
	     __done = (void *)1)

/* ---- memory allocation (slab.h, vmalloc.h) ---- */
#define GFP_KERNEL 0x1u
#define __GFP_HIGHMEM 0x2u
#define __GFP_ZERO 0x4u
#define __GFP_NOWARN 0x8u
void *cused_kmalloc(size_t size, gfp_t flags, const char *file, int line);
void kfree(const void *ptr);
#define kmalloc(size, flags) cused_kmalloc((size), (flags), __FILE__, __LINE__)
#define kzalloc(size, flags) cused_kmalloc((size), (flags) | __GFP_ZERO, __FILE__, __LINE__)
#define kcalloc(n, size, flags) \
	(((size) && (n) > SIZE_MAX / (size)) ? NULL : kzalloc((n) * (size), (flags)))
#define kvcalloc(n, size, flags) kcalloc(n, size, flags)
#define kvzalloc(size, flags) kzalloc(size, flags)
#define kvfree(ptr) kfree(ptr)
/* The typed forms of 7.x (kzalloc_obj(*p), kvzalloc_objs(p[0], n)). */
#define kzalloc_obj(obj, ...) ((__typeof__(obj) *)kzalloc(sizeof(obj), GFP_KERNEL))
#define kvzalloc_objs(obj, n, ...) ((__typeof__(obj) *)kcalloc((n), sizeof(obj), GFP_KERNEL))

/* ---- pages (mm.h, highmem.h) ---- */
struct mm_struct;
struct page {
	void *virt;		/* the page's memory: private, or the memfd's once inserted */
	int refcount;		/* atomic */
	unsigned long private;
	bool in_memfd;		/* virt is the memfd page `index` of `owner`'s space */
	void *owner;
	size_t index;
	struct mm_struct *mm;	/* the mm of the task that allocated it (the leak check) */
};
struct page *cused_alloc_page(gfp_t flags, const char *file, int line);
#define alloc_page(flags) cused_alloc_page((flags), __FILE__, __LINE__)
void __free_page(struct page *page);
void put_page(struct page *page);
void get_page(struct page *page);
static inline int page_to_nid(const struct page *page) { (void)page; return 0; }
static inline unsigned long page_private(const struct page *page) { return page->private; }
static inline void set_page_private(struct page *page, unsigned long value)
{
	page->private = value;
}
static inline void *kmap_local_page(struct page *page) { return page->virt; }
static inline void kunmap_local(const void *addr) { (void)addr; }
static inline void *kmap(struct page *page) { return page->virt; }
static inline void kunmap(struct page *page) { (void)page; }
static inline void *page_address(const struct page *page) { return page->virt; }
static inline void memcpy_to_page(struct page *page, size_t offset, const char *from, size_t len)
{
	memcpy((char *)page->virt + offset, from, len);
}
static inline void memcpy_from_page(char *to, struct page *page, size_t offset, size_t len)
{
	memcpy(to, (char *)page->virt + offset, len);
}
static inline void memset_page(struct page *page, size_t offset, int value, size_t len)
{
	memset((char *)page->virt + offset, value, len);
}
#define flush_dcache_page(page) do { (void)(page); } while (0)

/* ---- address spaces (mm_types.h, mmap_lock.h) ---- */
struct vm_area_struct {
	unsigned long vm_start, vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_flags;
	void *vm_private_data;
	void *cused_lock;	/* the per-VMA lock (runtime.c) */
	struct page **cused_ptes; /* the page mapped at each page of the range */
	size_t cused_npages;
};
struct mm_struct {
	int mm_users;		/* atomic: mmget / mmput */
	int mm_count;		/* atomic: mmgrab / mmdrop */
	void *cused_mmap_lock;
	void *cused_vma_ptr_lock;	/* what RCU protects in lock_vma_under_rcu */
	struct vm_area_struct *cused_vma;	/* the binder mapping: the only one cused sees */
	void *cused_owner;
	long cused_pages;	/* atomic: struct pages alive that this mm's task allocated */
	long cused_busy_inserts;	/* atomic: vm_insert_page answered -EBUSY (a lost race) */
	long cused_remote_gets;	/* atomic: pages get_user_pages_remote returned */
};
/* The calls that may sleep take the caller's file and line, for the atomic-sleep report. */
void cused_mmap_read_lock(struct mm_struct *mm, const char *file, int line);
bool cused_mmap_read_trylock(struct mm_struct *mm, const char *file, int line);
#define mmap_read_trylock(mm) cused_mmap_read_trylock((mm), __FILE__, __LINE__)
void mmap_read_unlock(struct mm_struct *mm);
void cused_mmap_write_lock(struct mm_struct *mm, const char *file, int line);
void mmap_write_unlock(struct mm_struct *mm);
#define mmap_read_lock(mm) cused_mmap_read_lock((mm), __FILE__, __LINE__)
#define mmap_write_lock(mm) cused_mmap_write_lock((mm), __FILE__, __LINE__)
struct vm_area_struct *vma_lookup(struct mm_struct *mm, unsigned long addr);
struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr);
struct vm_area_struct *cused_lock_vma_under_rcu(struct mm_struct *mm, unsigned long addr,
					       const char *file, int line);
#define lock_vma_under_rcu(mm, addr) cused_lock_vma_under_rcu((mm), (addr), __FILE__, __LINE__)
void vma_end_read(struct vm_area_struct *vma);
bool mmget_not_zero(struct mm_struct *mm);
void mmput(struct mm_struct *mm);
void mmput_async(struct mm_struct *mm);
void mmgrab(struct mm_struct *mm);
void mmdrop(struct mm_struct *mm);
int cused_vm_insert_page(struct vm_area_struct *vma, unsigned long addr, struct page *page,
			 const char *file, int line);
#define vm_insert_page(vma, addr, page) cused_vm_insert_page((vma), (addr), (page), __FILE__, __LINE__)
/* The zap of a range, under its name of each version. */
void cused_zap(struct vm_area_struct *vma, unsigned long addr, unsigned long size,
	       const char *file, int line);
#define zap_page_range(vma, addr, size) cused_zap(vma, addr, size, __FILE__, __LINE__)
#define zap_page_range_single(vma, addr, size, details) cused_zap(vma, addr, size, __FILE__, __LINE__)
#define zap_vma_range(vma, addr, size) cused_zap(vma, addr, size, __FILE__, __LINE__)
#define FOLL_NOFAULT 0x1u
long get_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked);

/* ---- current (sched.h) ---- */
struct task_struct {
	int pid;
	int tgid;
	struct task_struct *group_leader;
	struct mm_struct *mm;
};
extern __thread struct task_struct *cused_current_task;
#define current cused_current_task

/* ---- user memory (uaccess.h): binder's sender memory, read as cused reads it ---- */
unsigned long cused_copy_from_user(void *to, const void *from, unsigned long n, const char *file,
				   int line);
#define copy_from_user(to, from, n) cused_copy_from_user((to), (from), (n), __FILE__, __LINE__)

/* ---- seq_file ---- */
struct seq_file {
	void (*emit)(void *ctx, const char *text);
	void *ctx;
};
void seq_printf(struct seq_file *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void seq_puts(struct seq_file *m, const char *s) { m->emit(m->ctx, s); }

/* ---- list_lru and the shrinker ---- */
enum lru_status {
	LRU_REMOVED,
	LRU_REMOVED_RETRY,
	LRU_ROTATE,
	LRU_SKIP,
	LRU_RETRY,
	LRU_STOP,
};
struct list_lru_one {
	struct list_head list;
	long nr_items;
	spinlock_t lock;	/* cused's global LRU lock */
};
struct list_lru {
	struct list_lru_one one;
};
struct mem_cgroup;
int list_lru_init(struct list_lru *lru);
void list_lru_destroy(struct list_lru *lru);
/* With the file's call site: the LRU's lock is taken there on the file's behalf (lockdep). */
bool cused_list_lru_add(struct list_lru *lru, struct list_head *item, const char *file, int line);
bool cused_list_lru_del(struct list_lru *lru, struct list_head *item, const char *file, int line);
unsigned long list_lru_count(struct list_lru *lru);
void list_lru_isolate(struct list_lru_one *list, struct list_head *item);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 8, 0)
#define list_lru_add(lru, item, nid, memcg) \
	((void)(nid), (void)(memcg), cused_list_lru_add((lru), (item), __FILE__, __LINE__))
#define list_lru_del(lru, item, nid, memcg) \
	((void)(nid), (void)(memcg), cused_list_lru_del((lru), (item), __FILE__, __LINE__))
#define list_lru_add_obj(lru, item) cused_list_lru_add((lru), (item), __FILE__, __LINE__)
#define list_lru_del_obj(lru, item) cused_list_lru_del((lru), (item), __FILE__, __LINE__)
#else
#define list_lru_add(lru, item) cused_list_lru_add((lru), (item), __FILE__, __LINE__)
#define list_lru_del(lru, item) cused_list_lru_del((lru), (item), __FILE__, __LINE__)
#endif
/* The walk of a version: cused's shrinker walks its global LRU instead (glue.c), so the
 * kernel's own walk is never reached; it is declared for the file's binder_shrink_scan. */
unsigned long cused_list_lru_walk_unused(void);
#define list_lru_walk(lru, isolate, arg, nr) ((void)(isolate), (void)(arg), (void)(nr), \
					      cused_list_lru_walk_unused())

struct shrink_control {
	unsigned long nr_to_scan;
	unsigned long nr_scanned;
};
struct shrinker {
	unsigned long (*count_objects)(struct shrinker *, struct shrink_control *);
	unsigned long (*scan_objects)(struct shrinker *, struct shrink_control *);
	long batch;
	int seeks;
};
#define DEFAULT_SEEKS 2
struct shrinker *shrinker_alloc(unsigned int flags, const char *fmt, ...);
void shrinker_register(struct shrinker *shrinker);
void shrinker_free(struct shrinker *shrinker);
int register_shrinker(struct shrinker *shrinker, const char *fmt, ...);
void unregister_shrinker(struct shrinker *shrinker);

/* ---- trace events (tracepoint.h): the allocator's page events reach cused's trace ---- */
#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define PARAMS(...) __VA_ARGS__
#define TRACE_EVENT(name, proto, args, ...) \
	static inline void trace_##name(proto) { cused_trace_##name(args); }
#define DECLARE_EVENT_CLASS(name, proto, args, ...)
#define DEFINE_EVENT(template, name, proto, args) \
	static inline void trace_##name(proto) { cused_trace_##name(args); }
#define TRACE_EVENT_CONDITION(name, proto, args, cond, ...) TRACE_EVENT(name, PARAMS(proto), PARAMS(args))
/* The events the allocator emits, defined by glue.c; the others (binder.c's) are never called. */
#define cused_trace_binder_ioctl(...)
#define cused_trace_binder_lock(...)
#define cused_trace_binder_locked(...)
#define cused_trace_binder_unlock(...)
#define cused_trace_binder_ioctl_done(...)
#define cused_trace_binder_write_done(...)
#define cused_trace_binder_read_done(...)
#define cused_trace_binder_wait_for_work(...)
#define cused_trace_binder_txn_latency_free(...)
#define cused_trace_binder_transaction(...)
#define cused_trace_binder_transaction_received(...)
#define cused_trace_binder_transaction_node_to_ref(...)
#define cused_trace_binder_transaction_ref_to_node(...)
#define cused_trace_binder_transaction_ref_to_ref(...)
#define cused_trace_binder_transaction_fd_send(...)
#define cused_trace_binder_transaction_fd_recv(...)
#define cused_trace_binder_transaction_alloc_buf(...)
#define cused_trace_binder_transaction_buffer_release(...)
#define cused_trace_binder_transaction_failed_buffer_release(...)
#define cused_trace_binder_transaction_update_buffer_release(...)
#define cused_trace_binder_command(...)
#define cused_trace_binder_return(...)
#define cused_trace_binder_return_error(...)
#define cused_trace_binder_netlink_report(...)
void cused_trace_page(const void *alloc, int event, size_t page_index);
/* start and end are void __user * in 6.1, unsigned long in 6.12 and 7.2. */
void cused_trace_page_range(const void *alloc, int allocate, unsigned long start,
			    unsigned long end);
#define cused_trace_binder_update_page_range(a, allocate, start, end) \
	cused_trace_page_range(a, allocate, (unsigned long)(start), (unsigned long)(end))
#define cused_trace_binder_alloc_lru_start(a, i) cused_trace_page(a, 0, i)
#define cused_trace_binder_alloc_lru_end(a, i) cused_trace_page(a, 1, i)
#define cused_trace_binder_free_lru_start(a, i) cused_trace_page(a, 2, i)
#define cused_trace_binder_free_lru_end(a, i) cused_trace_page(a, 3, i)
#define cused_trace_binder_alloc_page_start(a, i) cused_trace_page(a, 4, i)
#define cused_trace_binder_alloc_page_end(a, i) cused_trace_page(a, 5, i)
#define cused_trace_binder_unmap_user_start(a, i) cused_trace_page(a, 6, i)
#define cused_trace_binder_unmap_user_end(a, i) cused_trace_page(a, 7, i)
#define cused_trace_binder_unmap_kernel_start(a, i) cused_trace_page(a, 8, i)
#define cused_trace_binder_unmap_kernel_end(a, i) cused_trace_page(a, 9, i)

#endif /* CUSED_KERNEL_API_H */

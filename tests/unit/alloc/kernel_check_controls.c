// SPDX-License-Identifier: GPL-2.0-only
/*
 * Negative controls for the kernel shim's debug checks (kernel_checks_test.cc): kernel-style C,
 * written for these tests, that does what a bad binder_alloc patch would do (sleep under a
 * spinlock, zap under it, WARN, keep a page), compiled against the shim like a tree's file.
 */
#include "cused_kernel_api.h"
#include <setjmp.h>

#include "runtime.h"

/* What glue.c gives the runtime for a tree's file: these controls own no LRU pages. */
void cused_glue_lru_item(struct list_head *item, void **owner, size_t *index)
{
	(void)item;
	*owner = NULL;
	*index = 0;
}

void *cused_glue_owner_of_alloc(const void *alloc)
{
	(void)alloc;
	return NULL;
}

static spinlock_t control_lock;
static struct mutex control_mutex;
/* Lock classes for the lock-order controls: one init site each, so one lockdep class each. */
static struct mutex order_a, order_b, quiet_a, quiet_b, try_a, try_b;
static struct mutex same_site[2];

void control_init(const struct cused_krt *rt)
{
	cused_rt = rt;
	spin_lock_init(&control_lock);
	mutex_init(&control_mutex);
	mutex_init(&order_a);
	mutex_init(&order_b);
	mutex_init(&quiet_a);
	mutex_init(&quiet_b);
	mutex_init(&try_a);
	mutex_init(&try_b);
	for (int i = 0; i < 2; i++)
		mutex_init(&same_site[i]);
}

/* A patch that turned a mutex into a spinlock and kept a sleeping call under it. */
int control_line_of_sleep;
void control_mutex_under_spinlock(void)
{
	spin_lock(&control_lock);
	control_line_of_sleep = __LINE__ + 1;
	mutex_lock(&control_mutex);
	mutex_unlock(&control_mutex);
	spin_unlock(&control_lock);
}

/* The same call without the spinlock: nothing to report. */
void control_mutex_alone(void)
{
	mutex_lock(&control_mutex);
	mutex_unlock(&control_mutex);
}

/* "Spinlock only": the shrinker's zap under the spinlock (the first negative control). */
void control_zap_under_spinlock(void)
{
	struct mm_struct *mm = cused_mm_new(NULL);
	struct vm_area_struct *vma = cused_vma_new(mm, 1UL << 32, 4 * PAGE_SIZE);

	spin_lock(&control_lock);
	zap_vma_range(vma, vma->vm_start, PAGE_SIZE);
	spin_unlock(&control_lock);
	mm->cused_vma = vma;
	cused_vma_unmap(mm);
	mmput(mm);
}

int control_line_of_warn;
void control_warn(void)
{
	control_line_of_warn = __LINE__ + 1;
	WARN_ON(control_line_of_warn > 0);
}

/* Pages a task allocated and never freed: what the leak check at release counts. */
long control_pages_kept(void)
{
	struct mm_struct *mm = cused_mm_new(NULL);
	struct task_struct task = { 1, 1, &task, mm };
	struct task_struct *saved = current;
	struct page *kept, *freed;
	long count;

	current = &task;
	kept = alloc_page(GFP_KERNEL);
	freed = alloc_page(GFP_KERNEL);
	__free_page(freed);
	count = mm->cused_pages;
	__free_page(kept);
	current = saved;
	mmput(mm);
	return count;
}

/* Lock order (lockdep): a patch whose two paths take two locks in opposite orders. */
int control_line_of_a_then_b, control_line_of_b_then_a;
void control_a_then_b(void)
{
	mutex_lock(&order_a);
	control_line_of_a_then_b = __LINE__ + 1;
	mutex_lock(&order_b);
	mutex_unlock(&order_b);
	mutex_unlock(&order_a);
}

void control_b_then_a(void)
{
	mutex_lock(&order_b);
	control_line_of_b_then_a = __LINE__ + 1;
	mutex_lock(&order_a);
	mutex_unlock(&order_a);
	mutex_unlock(&order_b);
}

/* The same inversion on another pair, for the run with lockdep off. */
void control_quiet_inversion(void)
{
	mutex_lock(&quiet_a);
	mutex_lock(&quiet_b);
	mutex_unlock(&quiet_b);
	mutex_unlock(&quiet_a);
	mutex_lock(&quiet_b);
	mutex_lock(&quiet_a);
	mutex_unlock(&quiet_a);
	mutex_unlock(&quiet_b);
}

/* The other order only try-locked, as binder's shrinker does: it cannot deadlock. */
void control_trylock_against_the_order(void)
{
	mutex_lock(&try_a);
	mutex_lock(&try_b);
	mutex_unlock(&try_b);
	mutex_unlock(&try_a);
	mutex_lock(&try_b);
	if (mutex_trylock(&try_a))
		mutex_unlock(&try_a);
	mutex_unlock(&try_b);
}

/* Two locks of one class (one init site, as two procs' alloc->mutex), both orders. */
void control_one_class_both_orders(void)
{
	mutex_lock(&same_site[0]);
	mutex_lock(&same_site[1]);
	mutex_unlock(&same_site[1]);
	mutex_unlock(&same_site[0]);
	mutex_lock(&same_site[1]);
	mutex_lock(&same_site[0]);
	mutex_unlock(&same_site[0]);
	mutex_unlock(&same_site[1]);
}

/* BUG_ON inside a call as glue.c makes one: the call is abandoned with the locks it took
 * released, and the caller answers with an error. */
int control_line_of_bug;
int control_call_that_bugs(void)
{
	struct cused_oops_frame frame;

	cused_oops_catch(&frame);
	if (setjmp(frame.env)) {
		cused_oops_unwind(&frame);
		return -ESRCH;
	}
	mutex_lock(&control_mutex);
	spin_lock(&control_lock);
	control_line_of_bug = __LINE__ + 1;
	BUG_ON(control_line_of_bug > 0);
	spin_unlock(&control_lock);
	mutex_unlock(&control_mutex);
	cused_oops_release(&frame);
	return 0;
}

/* Whether the control's locks are free (after the BUG's unwind) and none is recorded as held. */
int control_locks_free(void)
{
	int free_now = mutex_trylock(&control_mutex) && spin_trylock(&control_lock);
	if (free_now) {
		spin_unlock(&control_lock);
		mutex_unlock(&control_mutex);
	}
	return free_now && cused_runtime_held_locks() == 0;
}

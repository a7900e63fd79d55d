// SPDX-License-Identifier: GPL-2.0-only
/*
 * Negative controls for the kernel shim's debug checks (kernel_checks_test.cc): kernel-style C,
 * written for these tests, that does what a bad binder_alloc patch would do (sleep under a
 * spinlock, zap under it, WARN, keep a page), compiled against the shim like a tree's file.
 */
#include "cused_kernel_api.h"
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

void control_init(const struct cused_krt *rt)
{
	cused_rt = rt;
	spin_lock_init(&control_lock);
	mutex_init(&control_mutex);
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

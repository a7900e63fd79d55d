/* SPDX-License-Identifier: GPL-2.0-only */
/* What runtime.c and glue.c share inside one kernel design's object (not part of the ABI). */
#ifndef CUSED_KERNEL_RUNTIME_H
#define CUSED_KERNEL_RUNTIME_H

#include "cused_kernel_api.h"
#include "cused_kernel_abi.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>

extern const struct cused_krt *cused_rt;

/* runtime.c */
struct mm_struct *cused_mm_new(void *owner);
/* Frees a vma that cused_vma_new made and that is not (or no longer) mapped. */
void cused_vma_free(struct vm_area_struct *vma);
struct vm_area_struct *cused_vma_new(struct mm_struct *mm, unsigned long start, size_t length);
void cused_vma_unmap(struct mm_struct *mm);
struct list_lru *cused_file_lru(void);
struct shrinker *cused_file_shrinker(void);
bool cused_spin_held(const spinlock_t *lock);
void cused_spin_note_held(const spinlock_t *lock, const char *site);
void cused_spin_note_released(const spinlock_t *lock);
int cused_runtime_held_locks(void);
/* The allocator reports go to: the current task's, else the one charged (NULL: none). */
void *cused_runtime_owner(void);
void cused_runtime_charge(void *owner);
/* A debug check fired: reported to the allocator above. */
void cused_runtime_report(enum cused_kreport kind, const char *text);
const char *cused_runtime_held_name(int i);

/* BUG_ON's oops: the kernel kills the task and carries on. A call into the file catches it
 * (cused_oops_catch before, cused_oops_release after); a BUG inside longjmps back to the frame
 * with the locks the call took released (cused_oops_unwind), and the caller fails the request.
 * A BUG outside any frame aborts. */
struct cused_oops_frame {
	jmp_buf env;
	int held_base;			/* the thread's held locks when the call began */
	struct cused_oops_frame *prev;
};
void cused_oops_catch(struct cused_oops_frame *frame);
void cused_oops_release(struct cused_oops_frame *frame);
void cused_oops_unwind(struct cused_oops_frame *frame);

/* glue.c: the version's layout of an LRU item and of a binder_alloc */
void cused_glue_lru_item(struct list_head *item, void **owner, size_t *index);
void *cused_glue_owner_of_alloc(const void *alloc);

#endif

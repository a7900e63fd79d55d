/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lockdep's lock-order rule for a kernel design (lockdep.c): the locks a thread holds, with
 * their class and the site that took them, and the order graph between classes.
 */
#ifndef CUSED_KERNEL_LOCKDEP_H
#define CUSED_KERNEL_LOCKDEP_H

#include <stdbool.h>

/* How a held lock is released when a BUG unwinds the call that took it (runtime.c). */
enum cused_held_kind {
	CUSED_HELD_MUTEX,
	CUSED_HELD_SPIN,
	CUSED_HELD_RWLOCK_READ,	/* the mmap lock or a VMA lock (cused's rwlock), read */
	CUSED_HELD_RWLOCK_WRITE,	/* the mmap lock, written */
	CUSED_HELD_NOTED,	/* taken by cused on the file's behalf; cused releases it */
};

struct cused_held_lock {
	const void *lock;	/* the instance */
	const void *key;	/* its lockdep class */
	const char *name;
	const char *file;	/* where it was taken: the file's call site */
	int line;
	bool spin;
	bool trylock;
	enum cused_held_kind kind;
	void *impl;		/* what releasing it takes (cused's lock, the rwlock) */
};

/* Whether the rule is checked: cused's switch (struct cused_krt's lockdep), read per lock. */
bool cused_lockdep_enabled(void);

/* `taken` was acquired while the thread held `held[0..count)`: records the order of every held
 * class before `taken`'s (a trylock adds none: it cannot wait) and reports the first acquisition
 * that closes a cycle, once per pair of classes. */
void cused_lockdep_acquired(const struct cused_held_lock *held, int count,
			    const struct cused_held_lock *taken);

#endif

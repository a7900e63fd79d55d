// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lockdep's lock-order rule (CONFIG_PROVE_LOCKING) for the locks a kernel design's file takes:
 * each lock belongs to a class (the static key of the site that initialized it, or the lock
 * itself when it is defined statically, as lockdep classes locks), and every blocking
 * acquisition of class B while the thread holds class A records the dependency A -> B with the
 * two sites. An acquisition that would close a cycle (B -> ... -> A already recorded) is an
 * inversion: two threads taking the locks on the two paths can deadlock, whether or not they
 * ever did here. Reported once per pair of classes, naming both locks and the sites of both
 * orders. Written from lockdep's documentation (Documentation/locking/lockdep-design.rst).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cused_kernel_abi.h"
#include "lockdep.h"
#include "runtime.h"

#define CLASSES_MAX 32

struct lock_class {
	const void *key;
	const char *name;
};

/* The first acquisition that recorded `from -> to`: `from` taken at from_site, `to` at to_site. */
struct dependency {
	bool seen;
	const char *from_file, *to_file;
	int from_line, to_line;
};

static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;	/* lockdep's graph lock */
static struct lock_class classes[CLASSES_MAX];
static int class_count;
static struct dependency after[CLASSES_MAX][CLASSES_MAX];
static bool reported[CLASSES_MAX][CLASSES_MAX];

bool cused_lockdep_enabled(void)
{
	return cused_rt->lockdep && __atomic_load_n(cused_rt->lockdep, __ATOMIC_RELAXED);
}

/* The class of `key`, made on first sight; -1 when the table is full (reported once). */
static int class_of(const void *key, const char *name)
{
	for (int i = 0; i < class_count; i++)
		if (classes[i].key == key)
			return i;
	if (class_count == CLASSES_MAX) {
		static bool told;
		if (!told)
			cused_rt->report(NULL, CUSED_KREPORT_WARN,
					 "WARNING: lockdep: more than 32 lock classes, "
					 "the others are not checked");
		told = true;
		return -1;
	}
	classes[class_count] = (struct lock_class){ key, name };
	return class_count++;
}

/* Whether `to` is reachable from `from` in the recorded order; `path` gets the classes after
 * `from` (at most CLASSES_MAX), `*length` their number. */
static bool reaches(int from, int to, int *path, int *length)
{
	int previous[CLASSES_MAX], queue[CLASSES_MAX], head = 0, tail = 0;
	bool visited[CLASSES_MAX] = { false };

	queue[tail++] = from;
	visited[from] = true;
	while (head < tail) {
		int at = queue[head++];
		for (int next = 0; next < class_count; next++) {
			if (!after[at][next].seen || visited[next])
				continue;
			visited[next] = true;
			previous[next] = at;
			if (next == to) {
				int n = 0;
				for (int c = to; c != from; c = previous[c])
					n++;
				*length = n;
				for (int c = to, i = n - 1; c != from; c = previous[c], i--)
					path[i] = c;
				return true;
			}
			queue[tail++] = next;
		}
	}
	return false;
}

static void site(char *out, size_t size, const char *file, int line)
{
	if (line > 0)
		snprintf(out, size, "%s:%d", file, line);
	else
		snprintf(out, size, "%s", file);
}

/* The thread takes class `to` at `taken` while holding `held` (class `from`), and the graph
 * already has `to -> ... -> from`. */
static void report_inversion(int from, int to, const struct cused_held_lock *held,
			     const struct cused_held_lock *taken, const int *path, int length)
{
	/* The first recorded step of the other order: `to` held, the next class taken. */
	const struct dependency *first = &after[to][path[0]];
	char taken_at[192], held_at[192], then_at[192], then_held_at[192], chain[256];
	size_t used = 0;

	site(taken_at, sizeof(taken_at), taken->file, taken->line);
	site(held_at, sizeof(held_at), held->file, held->line);
	site(then_held_at, sizeof(then_held_at), first->from_file, first->from_line);
	site(then_at, sizeof(then_at), first->to_file, first->to_line);
	chain[0] = '\0';
	for (int i = 0; i < length && used < sizeof(chain); i++)
		used += (size_t)snprintf(chain + used, sizeof(chain) - used, " -> %s",
					 classes[path[i]].name);
	char text[2048];
	snprintf(text, sizeof(text),
		 "WARNING: possible circular locking dependency detected: %s taken at %s while "
		 "holding %s (taken at %s); the other order was seen before: %s%s, %s taken at %s "
		 "while holding %s (taken at %s)",
		 classes[to].name, taken_at, classes[from].name, held_at, classes[to].name, chain,
		 classes[path[0]].name, then_at, classes[to].name, then_held_at);
	cused_runtime_report(CUSED_KREPORT_LOCK_ORDER, text);
}

void cused_lockdep_acquired(const struct cused_held_lock *held, int count,
			    const struct cused_held_lock *taken)
{
	int path[CLASSES_MAX], length;

	if (taken->trylock)
		return;	/* a trylock never waits: it closes no cycle (lockdep adds no edge) */
	pthread_mutex_lock(&graph_lock);
	int to = class_of(taken->key, taken->name);
	for (int i = 0; to >= 0 && i < count; i++) {
		int from = class_of(held[i].key, held[i].name);
		/* Two locks of one class nested (lockdep's "recursive locking"): not checked here. */
		if (from < 0 || from == to)
			continue;
		if (!after[from][to].seen && reaches(to, from, path, &length) &&
		    !reported[from][to] && !reported[to][from]) {
			reported[from][to] = true;
			report_inversion(from, to, &held[i], taken, path, length);
		}
		if (!after[from][to].seen)
			after[from][to] = (struct dependency){ true, held[i].file, taken->file,
							       held[i].line, taken->line };
	}
	pthread_mutex_unlock(&graph_lock);
}

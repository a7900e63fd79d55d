#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What installing one page of a memfd costs here, the way the daemon installs buffer pages:
a write fault on a shared mapping, and posix_fallocate of one page. Prints microseconds per
page for each. tools/reproduce --page-install-cost runs it without pressure and inside the
CUSED_REPRODUCE_MEMCG memory cgroup (docs/reproductions.md)."""
import mmap
import os
import sys
import time

PAGE = 4096


def per_page(pages, install):
    start = time.perf_counter()
    for page in range(pages):
        install(page)
    return (time.perf_counter() - start) / pages * 1e6


def main():
    pages = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
    faulted = os.memfd_create("cused-page-install-fault")
    os.ftruncate(faulted, pages * PAGE)
    mapping = mmap.mmap(faulted, pages * PAGE)
    fault = per_page(pages, lambda page: mapping.__setitem__(page * PAGE, 1))
    allocated = os.memfd_create("cused-page-install-fallocate")
    os.ftruncate(allocated, pages * PAGE)
    fallocate = per_page(pages, lambda page: os.posix_fallocate(allocated, page * PAGE, PAGE))
    print(f"memfd page fault: {fault:.2f} us per page; fallocate: {fallocate:.2f} us per page "
          f"({pages} pages)")


if __name__ == "__main__":
    main()

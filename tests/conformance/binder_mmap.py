#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Python's own mmap module on a binder node (real-clients issue, point 2; S1.4, S2.7).

Usage: binder_mmap.py DEVICE

Runs unmodified against the kernel's /dev/binder (tests/vm) and against a cused node. Python
checks fstat() before it maps a regular file and refuses a length past its end, which a 0-byte
FUSE file fails; on the kernel the node is a character device and the call works. Only the
standard library is used (it runs with -S in the guest, where site-packages do not exist).
"""
import fcntl
import mmap
import os
import struct
import sys

# _IOWR('b', 9, struct binder_version): the protocol version, 8 for every 64-bit kernel.
BINDER_VERSION = (3 << 30) | (4 << 16) | (ord("b") << 8) | 9


def check(condition, message):
    if not condition:
        print("FAIL:", message)
        sys.exit(1)
    print("ok:", message)


def main():
    path = sys.argv[1]
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    # What libbinder maps (1 MiB minus two pages) and a round 1 MiB, read-only and private, as
    # the reproduction did.
    for length in ((1 << 20) - 2 * 4096, 1 << 20):
        other = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            mapping = mmap.mmap(other, length, mmap.MAP_PRIVATE, mmap.PROT_READ)
        except (ValueError, OSError) as error:
            check(False, f"mmap of {length} bytes: {error}")
        check(len(mapping) == length, f"mmap of {length} bytes, MAP_PRIVATE, PROT_READ")
        mapping.close()
        os.close(other)
    # The kernel's largest buffer space (S1.4) through MAP_SHARED, as a binder client maps it.
    mapping = mmap.mmap(fd, 4 << 20, mmap.MAP_SHARED, mmap.PROT_READ)
    check(len(mapping) == 4 << 20, "mmap of 4 MiB, MAP_SHARED, PROT_READ")
    answer = fcntl.ioctl(fd, BINDER_VERSION, bytes(4))
    check(struct.unpack("i", answer)[0] == 8, "BINDER_VERSION through fcntl.ioctl is 8 (S2.7)")
    mapping.close()
    os.close(fd)
    print("binder_mmap.py: all checks passed")


if __name__ == "__main__":
    main()

# SPDX-License-Identifier: GPL-2.0-only
# Sourced by tools/quickstart and tools/reproduce for their --block mode, the command binder-ab
# --block-setup starts for each block (docs/ab.md, "Blocks"). The sourcing script keeps its
# processes in `pids` and tears them down in its EXIT trap.

# The block's mount, fresh: a killed block's daemon leaves its mount behind.
reuse_block_mount() {  # reuse_block_mount MOUNT
  umount -l "$1" 2>/dev/null || true
  mkdir -p "$1"
}

# Says the block's state is ready (binder-ab --block-signals-ready) and holds it until binder-ab
# stops the block with SIGTERM; the EXIT trap then tears it down.
hold_block_until_stopped() {
  [ -z "${CUSED_AB_READY:-}" ] || : >"$CUSED_AB_READY"
  trap 'exit 0' TERM
  sleep infinity &
  pids+=($!)
  wait $!
  exit 0
}

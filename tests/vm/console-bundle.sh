# SPDX-License-Identifier: GPL-2.0-only
# Files back from a tests/vm guest over its console (the guest has no other way out): sourced
# by tests/diff/record-kernel-traces and tools/dev/diff-campaign.
#
#   "$(bundle_files PATTERN...)"   a guest shell command that prints the files (in the guest's
#                                  current directory) as marked base64 lines of a gzipped tar
#   unbundle_files LOG DEST        unpacks what such lines in a console log carry into DEST;
#                                  false when the log holds none

bundle_files() {
  echo "tar -cf - $* | gzip | base64 | sed 's/^/cused-vm-bundle: /'"
}

unbundle_files() {
  grep -q '^cused-vm-bundle: ' "$1" || return 1
  sed -n 's/^cused-vm-bundle: //p' "$1" | tr -d '\r' | base64 -d | gunzip | tar -C "$2" -xf -
}

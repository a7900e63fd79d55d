# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by tools/dev/tsan-stress and tools/dev/live-fuzz (bash): which lines of a run's log fail
# it, for a daemon built with any of the sanitizers and serving any design.
# The lines of a run's output that fail it even when its tests passed: a sanitizer's report (one
# at the daemon's exit, after with-cused stopped it, does not fail the suite) or a kernel check's. But
# one: the page references 7.2's file keeps after lost install races (docs/kernel-designs.md,
# "Found"): P pages left, each of the B -EBUSY answers of vm_insert_page followed by a lookup
# (get_user_pages_remote returned G = B pages) whose reference no path puts. Losers of one page
# leave one page, so 1 <= P <= B (check-design's is_lost_install_race, the same rule).
lost_install_race() {  # LINE
  local re='^cused: kernel kernel:7\.2: ([0-9]+) page\(s\) still referenced after '
  re+='binder_alloc_deferred_release \(vm_insert_page answered -EBUSY ([0-9]+) time\(s\), '
  re+='get_user_pages_remote returned ([0-9]+) page\(s\)\)$'
  [[ $1 =~ $re ]] || return 1
  local pages=${BASH_REMATCH[1]} busy=${BASH_REMATCH[2]} gets=${BASH_REMATCH[3]}
  [ "$busy" = "$gets" ] && [ "$pages" -ge 1 ] && [ "$pages" -le "$busy" ]
}
# LOG's report lines; with --known, only the lost install races, else all but them.
reports_in() {  # [--known] LOG
  local known=0 line
  [ "$1" = --known ] && { known=1; shift; }
  grep -E 'ThreadSanitizer|AddressSanitizer|LeakSanitizer|runtime error: |^cused: kernel' "$1" | while IFS= read -r line; do
    if lost_install_race "$line"; then
      [ $known = 0 ] || printf '%s\n' "$line"
    else
      [ $known = 1 ] || printf '%s\n' "$line"
    fi
  done || true
}
# Fails (status 1), after printing them, when LOG holds any of those lines; prints the known one.
fail_on_reports() {  # WHAT LOG
  local found known
  known=$(reports_in --known "$2")
  [ -z "$known" ] || printf '%s: known, not failed: %s\n' "$1" "$known"
  found=$(reports_in "$2")
  [ -z "$found" ] && return 0
  echo "$1: reports in $2:"
  echo "$found" | sort | uniq -c | sort -rn | head -n 20
  return 1
}

#!/bin/sh
# SPDX-License-Identifier: MIT
# Exhaustive safety verification of channel.pml with SPIN.
#
#   run-spin.sh [path/to/channel.pml]
#
# Checks the model in several configurations (records sent, nodes the
# producer may allocate): assertions and invalid end states, with a full
# search (no depth truncation). Then checks that each injected bug is
# caught, so that a model weakened by a later edit does not pass silently.
# Exits 0 when all is well, 1 on any failure, 77 when spin or a C compiler
# is missing.

set -u

here=$(cd "$(dirname "$0")" && pwd)
model=${1:-$here/channel.pml}

command -v spin >/dev/null 2>&1 || { echo "spin not found: skipped"; exit 77; }
cc=
for c in "${CC:-}" gcc cc clang clang-19; do
	if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then cc=$c; break; fi
done
[ -n "$cc" ] || { echo "no C compiler for pan.c: skipped"; exit 77; }

work=$(mktemp -d "${TMPDIR:-/tmp}/gt-spin.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT INT TERM
cp "$model" "$work/channel.pml" || exit 1
cd "$work" || exit 1

# verify DEFINES...: runs spin and pan, leaves pan's report in pan.out.
verify() {
	rm -f pan pan.* channel.pml.trail
	spin "$@" -a channel.pml >spin.out 2>&1 || { cat spin.out; return 2; }
	"$cc" -O1 -w -DSAFETY -o pan pan.c >cc.out 2>&1 ||
		{ cat cc.out; return 2; }
	./pan -m100000 $pan_flags >pan.out 2>&1
	return 0
}

pan_flags=

fail=0

for cfg in "-DRECORDS=4 -DPOOL=2" "-DRECORDS=4 -DPOOL=4" \
	   "-DRECORDS=5 -DPOOL=3" "-DRECORDS=3 -DPOOL=1"; do
	# shellcheck disable=SC2086
	verify $cfg || { fail=1; continue; }
	states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' pan.out)
	if grep -q "errors: 0" pan.out &&
	   ! grep -q "max search depth too small" pan.out &&
	   ! grep -q "invalid end state (" pan.out; then
		echo "ok   $cfg: $states states, no errors"
	else
		echo "FAIL $cfg"
		cat pan.out
		[ -f channel.pml.trail ] && spin -t -p $cfg channel.pml | tail -40
		fail=1
	fi
done

# Each injected bug must trip the assertion that guards against it; -c0
# keeps searching past the first error so that the one expected is found.
pan_flags=-c0
for case in "BUG_NO_REVERSE:rec[n]==expect" \
	    "BUG_STEAL_REPLACES:rec[n]==expect" \
	    "BUG_TWO_PRODUCERS:fails<=1"; do
	bug=${case%%:*}
	expect=${case#*:}
	verify -DRECORDS=4 -DPOOL=2 -D$bug || { fail=1; continue; }
	if grep -qF "assertion violated ($expect)" pan.out; then
		echo "ok   $bug caught by assert($expect)"
	else
		echo "FAIL $bug: not caught by assert($expect)"
		grep -m5 -E "violated|errors:" pan.out
		fail=1
	fi
done

exit $fail

#!/bin/bash
# No backend of oomctl prints a result (issue 21): the backends' objects
# (cli/CMakeLists.txt, oomctl_backends) may write messages on stderr, and
# nothing on stdout. Read from the symbols they use: stdout itself, the
# stdio calls that write there, and the output layer's renderers (output.h:
# out_*, table_*) and libsmartcols.
#
# usage: check-backends-quiet.sh OBJECT...
set -u
[ $# -gt 0 ] || { echo "usage: $0 OBJECT..." >&2; exit 2; }
forbidden='^(stdout|printf|vprintf|puts|putchar|putchar_unlocked|__printf_chk|__vprintf_chk|out_.*|table_.*|scols_.*)$'
failed=0
for obj; do
	syms=$(nm -u "$obj") ||
		{ echo "not ok - nm cannot read $obj"; failed=1; continue; }
	bad=$(awk '{ print $NF }' <<<"$syms" | grep -E "$forbidden" | tr '\n' ' ')
	if [ -n "$bad" ]; then
		echo "not ok - $(basename "$obj") prints: $bad"
		failed=1
	else
		echo "ok - $(basename "$obj")"
	fi
done
exit $failed

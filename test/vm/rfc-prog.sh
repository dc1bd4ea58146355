#!/bin/sh
# rfc-prog.sh PATCH NAME OUT: write the file NAME that the posted PATCH adds
# (a new file: its one hunk's "+" lines) to OUT, as the RFC posted it.
set -eu
[ -r "$1" ] || { echo "rfc-prog.sh: no $1 (the project's shared/seeds)" >&2; exit 1; }
awk -v name="$2" '
	$1 == "+++" && substr($2, length($2) - length(name) + 1) == name { on = 1; next }
	on && /^@@/ { next }
	on && /^\+/ { print substr($0, 2); found = 1; next }
	on { exit }
	END { if (!found) exit 1 }' "$1" >"$3" ||
	{ echo "rfc-prog.sh: $1 adds no $2" >&2; exit 1; }

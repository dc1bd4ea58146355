#!/bin/bash
# oomctl event export --prometheus, the guest's half of oomctl_export.py:
# two OOM kills by largest-leaf in a cgroup whose name has a quote and a
# backslash, three declared OOMs, one PSI trigger; then the exports that the
# host parses (the guest has no Prometheus parser), the file form replaced
# atomically, and bad usage that leaves no file; last, the exports once the
# victims' cgroup is removed and once every record dropped out of the log.
# Usage (in the guest): oomctl_export.sh BUILD_DIR OUT_DIR
set -u
build=${1:?usage: oomctl_export.sh BUILD_DIR OUT_DIR}
out=${2:?usage: oomctl_export.sh BUILD_DIR OUT_DIR}
. "$(dirname "$0")/lib.sh"
OOMCTL=$build/cli/oomctl HOG=$build/test/vm/hog
oomctl() { "$OOMCTL" "$@"; }
mkdir -p "$out"

# cgroupfs refuses only '/' and newline in a name
Q='/ex"q\b'
cg_remove "$Q"; cg_remove /ex_decl
check "a cgroup named with a quote and a backslash" cg_make "$Q" 64M
cg_make "$Q/leaf"
cg_make /ex_decl

check "attach largest-leaf" oomctl policy attach largest-leaf
for i in 1 2; do
	h=$(hog_go "$Q/leaf" 100 0)
	check "OOM $i: largest-leaf kills the hog" wait_dead "$h" 30
done
check "3 declared OOMs in /ex_decl" "$build/test/vm/declare_flood" $CG/ex_decl 3
check "a PSI trigger on /ex_decl" oomctl psi add /ex_decl some 100ms 1s

# What the host compares the export with
oomctl -j event list > "$out/events.json"
oomctl -j policy list > "$out/policies.json"

check "export to stdout" bash -c "'$OOMCTL' event export --prometheus > '$out/stdout.prom'"

# The file form, in a textfile folder on tmpfs as node_exporter would have
tf=/tmp/textfile file=/tmp/textfile/oomctl.prom
mkdir -p $tf && mount -t tmpfs textfile $tf
check "export to a file" oomctl event export --prometheus $file
check "the file is mode 0644, for a collector that is not root" test "$(stat -c %a $file)" = 644
check "its folder holds it alone" test "$(ls -A $tf)" = oomctl.prom
cp $file "$out/file.prom"
old=$(stat -c %i $file)
exec 3<$file
check "export again" oomctl event export --prometheus $file
check "the file was replaced by another (rename), not rewritten" \
	test "$(stat -c %i $file)" != "$old"
check "a reader of the old file still reads all of it" cmp - "$out/file.prom" <&3
exec 3<&-
check "no temporary file is left" test "$(ls -A $tf)" = oomctl.prom

# A reader never sees a partial file: read it while exports replace it
mkdir -p "$out/reads"
(for _ in $(seq 15); do "$OOMCTL" event export --prometheus $file; done) &
writer=$!
n=0
while kill -0 $writer 2>/dev/null; do
	n=$((n + 1)); cat $file > "$out/reads/$n.prom"
done
wait $writer
check "the exports while reading all succeeded" test $? = 0
echo "# $n reads while exporting"

# Bad usage: one line, non-zero, no partial file, FILE untouched
check "no format" fails oomctl event export
check "unknown format" fails oomctl event export --openmetrics
check "-j does not apply" bash -c "'$OOMCTL' -j event export --prometheus >/dev/null; test \$? = 2"
check "a folder that does not exist" fails oomctl event export --prometheus /nonexistent/x.prom
check "FILE is a folder" fails oomctl event export --prometheus $tf
check "  and that folder is unchanged" test "$(ls -A $tf)" = oomctl.prom
cp $file /tmp/before.prom
check "make the folder read-only" mount -o remount,ro $tf
check "a read-only folder" fails oomctl event export --prometheus $file
check "  leaves the old file as it was" cmp $file /tmp/before.prom
check "  and no temporary file" test "$(ls -A $tf)" = oomctl.prom

# The counts are the kernel's, not the ring's: a removed cgroup keeps its
# path, and records that drop out of the log leave them as they were. All
# drop out at once when the head moves on by a whole ring, as if 4096 newer
# records had been written.
cg_remove "$Q"
check "export once the victims' cgroup is removed" \
	bash -c "'$OOMCTL' event export --prometheus > '$out/removed.prom'"
head_pin=/sys/fs/bpf/oomctl/events_head
head=$(bpftool -j map lookup pinned $head_pin key 0 0 0 0 | jq '.formatted.value // empty')
check "the log's head ($head) is read" test -n "$head"
le64() { local x; x=$(printf '%016x' "$1"); for i in 14 12 10 8 6 4 2 0; do printf '0x%s ' "${x:$i:2}"; done; }
# shellcheck disable=SC2046
check "move the head on by 4096" bpftool map update pinned $head_pin key 0 0 0 0 \
	value $(le64 $((head + 4096)))
check "event list shows none of the records now" \
	json '.events | length == 0' oomctl -j event list
check "export after the records dropped out" \
	bash -c "'$OOMCTL' event export --prometheus > '$out/wrapped.prom'"

oomctl psi del /ex_decl >/dev/null
oomctl policy detach largest-leaf >/dev/null
umount $tf
cg_remove /ex_decl
done_checks

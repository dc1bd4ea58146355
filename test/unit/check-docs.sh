#!/bin/bash
# Do oomctl's help, its bash completion and its man pages agree on the
# objects, the verbs and the options? (bpftool's selftests check the same
# of main.h, the man pages and the completion.) The binary is the truth:
# `oomctl help` for objects, `oomctl OBJECT help` for verbs, `oomctl --help`
# for options. The completion is asked as bash would ask it.
#
# SRC_MAN_DIR is man/ of the source tree, whose pages say @OOMCTL_VERSION@;
# MAN_DIR is the man hierarchy the build writes from it with the version
# (cli/CMakeLists.txt; MANPATH=MAN_DIR man oomctl works), and the one
# checked: man8/oomctl.8 documents the options and every object; an object
# has its own man8/oomctl-OBJECT.8, or its verbs are in oomctl.8 (dump).
# Every page of SRC_MAN_DIR (man8/*.8, man7/*.7, man5/*.5) is written to MAN_DIR (so
# cli/CMakeLists.txt lists it) with oomctl's version in its .TH, has the
# sections a page needs, a .TH and a NAME that match its file, references
# only oomctl pages that exist, is in oomctl.8's SEE ALSO, and lints clean
# (mandoc -Tlint, groff -ww; each skipped if not installed).
#
# usage: check-docs.sh OOMCTL COMPLETION_FILE SRC_MAN_DIR MAN_DIR
set -u

oomctl=$(realpath "$1") completion=$(realpath "$2") srcdir=$3 mandir=$4
n=0 failed=0
overview=$mandir/man8/oomctl.8
required_sections=("NAME" "SYNOPSIS" "DESCRIPTION" "EXAMPLES" "SEE ALSO")
# and what an admin looks up in a command's page, an overview's (7), and a
# file's (5)
required_sections_8=("EXIT STATUS" "FILES")
required_sections_7=("EXIT STATUS")
required_sections_5=("FILE FORMAT")

pass() { echo "ok $((++n)) - $1"; }
diag() { sed 's/^/#   /'; }
fail() { echo "not ok $((++n)) - $1"; failed=$((failed + 1)); }
skip() { echo "ok $((++n)) # SKIP $1"; }

# same NAME WANT GOT: the two word lists are equal as sets
same()
{
	local want got
	want=$(tr ' ' '\n' <<<"$2" | sed '/^$/d' | sort -u | tr '\n' ' ')
	got=$(tr ' ' '\n' <<<"$3" | sed '/^$/d' | sort -u | tr '\n' ' ')
	if [[ $want == "$got" && $want ]]; then
		pass "$1"
	else
		fail "$1"
		echo "#   want: $want"
		echo "#   got:  $got"
	fi
}

# What the completion offers for "oomctl WORDS...", the last being typed.
complete_words()
{
	# in an empty folder, so that no file name is offered; PATH without an
	# oomctl, so that no live name is
	local empty
	empty=$(mktemp -d) || return
	(cd "$empty" && PATH=/usr/bin:/bin bash -c '
		source /usr/share/bash-completion/bash_completion || exit 1
		source "$0" || exit 1
		COMP_WORDS=(oomctl "$@")
		COMP_CWORD=$#
		COMP_LINE="oomctl $*"
		COMP_POINT=${#COMP_LINE}
		_oomctl_bpf oomctl "${COMP_WORDS[COMP_CWORD]}" \
			"${COMP_WORDS[COMP_CWORD - 1]}" 2>/dev/null
		printf "%s\n" "${COMPREPLY[@]}"
	' "$completion" "$@") | tr '\n' ' '
	rmdir "$empty"
}

# Man page text without roff escapes and fonts, to grep words in
man_text()
{
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\(em/ /g' "$1"
}

if ! "$oomctl" help >/dev/null; then
	fail "oomctl help runs"
	echo "1..$n"
	exit 1
fi

objects=$("$oomctl" help |
	sed -n 's/.*OBJECT := { \(.*\) }.*/\1/p' | tr -d '|')
same "objects: help vs completion" "$objects help" "$(complete_words '')"

# argp's --help: "  -j, --json  ..." and "      --usage ..."
options=$("$oomctl" --help | grep -o -- '^ *\(-., \)\?--[a-z-]*' |
	sed 's/.*\(--[a-z-]*\)$/\1/')
same "options: --help vs completion" "$options" "$(complete_words -)"

for obj in $objects; do
	verbs=$("$oomctl" "$obj" help |
		sed -n "s/^\(Usage:\)\? *[^ ]* $obj \([a-z-]\+\).*/\2/p")
	same "$obj: verbs of help vs completion" "$verbs" \
		"$(complete_words "$obj" '')"
done
same "help: objects offered after 'help'" "$objects help" \
	"$(complete_words help '')"

builtins=$("$oomctl" policy help | sed -n 's/.*NAME := { \(.*\) | POLICY }.*/\1/p' |
	tr -d '|')
same "policy: built-in names of help vs completion" "$builtins" \
	"$(complete_words policy attach '')"

# The verbs `oomctl OBJECT help` lists
verbs_of()
{
	"$oomctl" "$1" help |
		sed -n "s/^\(Usage:\)\? *[^ ]* $1 \([a-z-]\+\).*/\2/p"
}

# documents FILE OBJ VERB: "oomctl memcg list" in prose, or a bold verb in
# a SYNOPSIS
documents()
{
	grep -q -- "$2 $3" <<<"$(man_text "$1")" || grep -qF -- "\\fB$3\\fR" "$1"
}

if [[ -f $overview ]]; then
	pass "$overview exists"
	text=$(man_text "$overview")
	for obj in $objects; do
		if grep -qw -- "$obj" <<<"$text"; then
			pass "oomctl.8 names $obj"
		else
			fail "oomctl.8 names $obj"
		fi
	done
	for opt in $options; do
		if grep -q -- "$opt\b" <<<"$text"; then
			pass "oomctl.8 documents $opt"
		else
			fail "oomctl.8 documents $opt"
		fi
	done
else
	fail "$overview exists"
fi

for obj in $objects; do
	page=$mandir/man8/oomctl-$obj.8
	if [[ -f $page ]]; then
		for verb in $(verbs_of "$obj"); do
			if documents "$page" "$obj" "$verb"; then
				pass "oomctl-$obj.8 documents '$obj $verb'"
			else
				fail "oomctl-$obj.8 documents '$obj $verb'"
			fi
		done
	elif [[ -f $overview ]]; then
		# no page of its own: oomctl.8 must say it all (oomctl dump)
		for verb in $(verbs_of "$obj"); do
			if grep -q -- "$obj $verb" <<<"$(man_text "$overview")"; then
				pass "oomctl.8 documents '$obj $verb' (no oomctl-$obj.8)"
			else
				fail "oomctl.8 documents '$obj $verb' (no oomctl-$obj.8)"
			fi
		done
	fi
done

# The section headings of a page, one per line, quotes and fonts removed
sections_of()
{
	sed -n 's/^\.SH[[:space:]]\+//p' "$1" | sed -e 's/"//g' -e 's/\\f[BIRP]//g' \
		-e 's/[[:space:]]*$//'
}

have_mandoc=false have_groff=false
command -v mandoc >/dev/null && have_mandoc=true
command -v groff >/dev/null && have_groff=true
$have_mandoc || skip "mandoc is not installed: no mandoc -Tlint"
$have_groff || skip "groff is not installed: no groff -ww"

# the pages of the source tree, each as the build wrote it
shopt -s nullglob
pages=()
for src in "$srcdir"/man8/*.8 "$srcdir"/man7/*.7 "$srcdir"/man5/*.5; do
	pages+=("$mandir/${src#"$srcdir"/}")
done
shopt -u nullglob
version=$("$oomctl" --version | sed -n '1s/^oomctl v\?//p')
see_also=$( [[ -f $overview ]] && man_text "$overview" |
	sed -n '/^\.SH "\?SEE ALSO/,/^\.SH/p')
for page in "${pages[@]}"; do
	file=${page##*/} name=${file%.*} sec=${file##*.}
	if [[ ! -f $page ]]; then
		fail "$file is written to $mandir (listed in cli/CMakeLists.txt)"
		continue
	fi
	pass "$file is written to $mandir (listed in cli/CMakeLists.txt)"
	if [[ $version ]] &&
		grep -q "^\.TH .* \"oomctl $version\" " "$page" && ! grep -q @ "$page"; then
		pass "$file: .TH says oomctl $version, no @VAR@ left"
	else
		fail "$file: .TH says oomctl $version, no @VAR@ left"
		grep -e '^\.TH' -e @ "$page" | diag
	fi
	secs=$(sections_of "$page")

	want_sections=("${required_sections[@]}")
	[[ $sec == 8 ]] && want_sections+=("${required_sections_8[@]}")
	[[ $sec == 7 ]] && want_sections+=("${required_sections_7[@]}")
	[[ $sec == 5 ]] && want_sections+=("${required_sections_5[@]}")
	for want in "${want_sections[@]}"; do
		if grep -qxF -- "$want" <<<"$secs"; then
			pass "$file has $want"
		else
			fail "$file has $want"
		fi
	done

	# .TH OOMCTL\-MEMCG 8 ...: the title and section of the file's name
	th=$(sed -n 's/^\.TH[[:space:]]\+\([^[:space:]]*\)[[:space:]]\+\([^[:space:]]*\).*/\1 \2/p' \
		"$page" | head -n 1 | sed 's/\\-/-/g')
	if [[ $th == "${name^^} $sec" && ${page%/*} == */man$sec ]]; then
		pass "$file: .TH ${name^^} $sec, in man$sec/"
	else
		fail "$file: .TH ${name^^} $sec, in man$sec/"
		echo "#   got: .TH $th in ${page%/*}"
	fi

	# the NAME line: "oomctl\-memcg \- what it is"
	nameline=$(sed -n '/^\.SH[[:space:]]\+"\?NAME/{n;p;q}' "$page" | sed 's/\\-/-/g')
	if [[ $nameline == "$name - "?* ]]; then
		pass "$file: NAME line starts with '$name -'"
	else
		fail "$file: NAME line starts with '$name -'"
		echo "#   got: $nameline"
	fi

	# references to oomctl pages (ours are in sections 5, 7 and 8; systemd's
	# oomctl(1) is another program) must exist
	refs=$(man_text "$page" | grep -o 'oomctl\(-[a-z0-9]\+\|\.conf\)* \?([578])' |
		tr -d ' ' | sort -u)
	for ref in $refs; do
		rname=${ref%(*} rsec=${ref#*(}
		rsec=${rsec%)}
		if [[ -f $mandir/man$rsec/$rname.$rsec ]]; then
			pass "$file: $ref exists"
		else
			fail "$file: $ref exists (no $mandir/man$rsec/$rname.$rsec)"
		fi
	done

	if [[ $page != "$overview" ]]; then
		if grep -q -- "$name ($sec)" <<<"$see_also"; then
			pass "oomctl.8 SEE ALSO lists $name($sec)"
		else
			fail "oomctl.8 SEE ALSO lists $name($sec)"
		fi
	fi


	if $have_mandoc; then
		lint=$(mandoc -Tlint -Wwarning "$page" 2>&1)
		if [[ -z $lint ]]; then
			pass "$file: mandoc -Tlint is clean"
		else
			fail "$file: mandoc -Tlint is clean"
			diag <<<"$lint"
		fi
	fi
	if $have_groff; then
		lint=$(groff -man -ww -z "$page" 2>&1)
		if [[ -z $lint ]]; then
			pass "$file: groff -ww is clean"
		else
			fail "$file: groff -ww is clean"
			diag <<<"$lint"
		fi
	fi
done
if ((${#pages[@]} == 0)); then
	fail "man pages in $mandir/man8 and $mandir/man7"
fi

# An admin has the package, not the source tree: no page sends them there
for page in "${pages[@]}"; do
	file=${page#"$mandir"/}
	tree=$(grep -nE 'source tree|README\.md|(^|[^/[:alnum:]])(bpf|cli|kernel|test)/[[:alnum:]_.-]+' "$page" |
		grep -v '^[0-9]*:\.\\"')	# roff comments are for us
	if [[ -z $tree ]]; then
		pass "$file: points into no source tree"
	else
		fail "$file: points into no source tree"
		diag <<<"$tree"
	fi
done

echo "1..$n"
echo "check-docs: $((n - failed)) passed, $failed failed"
((failed == 0))

#!/bin/sh
# run.sh: one ctest test of tests/fuzz (FUZZ_SRC: this directory, FUZZ_WORK: scratch in the build tree).
#
#   sh run.sh fuzz TARGET NAME SECONDS   fuzz for SECONDS from the seeds of corpus/NAME
#   sh run.sh regress TARGET NAME        run each input of regress/NAME once
#
# The seeds are only read: new inputs go to FUZZ_WORK/NAME/corpus, a crash to
# FUZZ_WORK/NAME/artifacts. A crash found belongs in regress/NAME with its fix.
set -eu
mode=$1 target=$2 name=$3
work=$FUZZ_WORK/$name
mkdir -p "$work"
TMPDIR=$work; export TMPDIR

case $mode in
regress)
	set --
	for f in "$FUZZ_SRC/regress/$name"/*; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
	[ $# -gt 0 ] || { echo "no regression inputs for $name"; exit 0; }
	exec "$target" -timeout=10 "$@"
	;;
fuzz)
	secs=$4
	rm -rf "$work/corpus" "$work/artifacts"
	mkdir -p "$work/corpus" "$work/artifacts"
	# -close_fd_mask=2: the helper's log lines would swamp the output; libFuzzer
	# and the sanitizers still report on their own copy of stderr.
	dict=
	[ -f "$FUZZ_SRC/$name.dict" ] && dict=-dict=$FUZZ_SRC/$name.dict
	rc=0
	# shellcheck disable=SC2086
	"$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -close_fd_mask=2 $dict \
		-artifact_prefix="$work/artifacts/" \
		"$work/corpus" "$FUZZ_SRC/corpus/$name" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "fuzz_$name failed: the input is in $work/artifacts/;" \
			"fix the bug and add the input to tests/fuzz/regress/$name/" >&2
		exit "$rc"
	fi
	;;
*)
	echo "usage: sh run.sh fuzz|regress TARGET NAME [SECONDS]" >&2
	exit 2
	;;
esac

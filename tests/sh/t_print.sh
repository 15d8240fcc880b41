# t_print.sh: print on local main only; stdin copied or drained; no option parsing.
. "$(dirname "$0")/lib.sh"

rank() { echo "ACCELCTL_RANK=$1 ACCELCTL_LOCAL_RANK=$(($1 % 2)) ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_WORLD_SIZE=2"; }

testPrintsOnLocalMainOnly() {
	local r want
	for r in 0 1 2 3; do
		# shellcheck disable=SC2046
		run $(rank "$r") -- print hello "big world"
		assertRc 0 "print on rank $r"
		want=""; [ $((r % 2)) = 0 ] && want="hello big world"
		assertEquals "print output on rank $r" "$want" "$out"
		assertEquals "" "$err"
	done
}

testSingleProcessPrints() {
	run -- print one
	assertEquals one "$out"
}

testNoOptionParsing() {
	run -- print -x --foo -n
	assertEquals "-x --foo -n" "$out"
	run -- print -- --help
	assertEquals "--help" "$out"
	run -- print --help
	assertRc 0 "print --help"
	case $out in usage:\ accelctl\ print*) ;; *) fail "print --help shows help: $out" ;; esac
	run -- print
	assertRc 0 "print with empty stdin"
	assertEquals "" "$out"
}

testStdinCopied() {
	local d; d=$(scratch)
	printf 'a\nb\0c' >"$d/in"
	env -i ACCELCTL_RANK=2 ACCELCTL_LOCAL_RANK=0 ACCELCTL_WORLD_SIZE=4 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		"$ACCELCTL" print <"$d/in" >"$d/got"
	assertEquals "rc" 0 $?
	assertTrue "stdin copied byte for byte" "cmp -s '$d/in' '$d/got'"
}

# A writer piped into print on a non-main rank must not die of SIGPIPE.
testNonMainDrainsStdin() {
	local st
	st=$(env -i PATH=/usr/bin:/bin ACCELCTL_RANK=1 ACCELCTL_LOCAL_RANK=1 ACCELCTL_WORLD_SIZE=2 ACCELCTL_LOCAL_WORLD_SIZE=2 \
		bash -c 'seq 1 300000 | "$0" print; echo "${PIPESTATUS[0]} ${PIPESTATUS[1]}"' "$ACCELCTL")
	assertEquals "writer and print both exit 0" "0 0" "$st"
}

testWriteErrorIs125() {
	if [ ! -w /dev/full ]; then startSkipping; fi
	env -i "$ACCELCTL" print hello >/dev/full 2>"$(scratch)/err"
	assertEquals "write error" 125 $?
	grep -q "accelctl: print: write error on standard output: No space left on device" "$(scratch)/err"
	assertTrue "write error message" $?
}

load_shunit2

# t_broadcast.sh: broadcast of text, binary data with NUL bytes, 1 MiB, stdin; errors.
. "$(dirname "$0")/lib.sh"

testValueArgument() {
	run -- launch -n 4 --tag -- bash -c 'v=$(accelctl broadcast id "value of $ACCELCTL_RANK"); echo "got [$v]"'
	assertRc 0 broadcast
	assertEquals "every rank gets rank 0's value" 4 "$(printf '%s\n' "$out" | grep -c 'got \[value of 0\]')"
}

testBinaryWithNulBytes() {
	local d; d=$(scratch)/bin; mkdir -p "$d"
	printf 'a\0b\0\0c\n\377' >"$d/in"
	run -- launch -n 3 -- sh -c 'accelctl broadcast blob <'"$d"'/in >'"$d"'/out.$ACCELCTL_RANK'
	assertRc 0 "binary broadcast"
	local r
	for r in 0 1 2; do
		assertTrue "rank $r got the bytes" "cmp -s '$d/in' '$d/out.$r'"
	done
}

testOneMiBFromStdin() {
	local d; d=$(scratch)/big; mkdir -p "$d"
	head -c 1048576 /dev/urandom >"$d/in"
	run -- launch -n 4 -- sh -c 'if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast big <'"$d"'/in; else accelctl broadcast big </dev/null; fi >'"$d"'/out.$ACCELCTL_RANK'
	assertRc 0 "1 MiB"
	local r
	for r in 0 1 2 3; do
		assertTrue "rank $r got 1 MiB intact" "cmp -s '$d/in' '$d/out.$r'"
	done
}

# A closed stdout (">&-", as some job wrappers run steps) is the documented write
# error on every rank, and nothing lands on the helper's socket; a closed stdin of
# the source is a read error, not a read of the socket.
testClosedStandardDescriptors() {
	local d; d=$(scratch)/closed; mkdir -p "$d"
	run ACCELCTL_JOB_ID=closed$$ -- launch -n 3 --tag -- sh -c '
		for i in 1 2 3; do accelctl broadcast --timeout 20s c$i "value $i" >&-; echo "rc=$?"; done
		accelctl barrier --timeout 20s after >&-; echo "barrier=$?"
		accelctl is-main >&- 2>&-; echo "is-main=$?"'
	assertEquals "every broadcast a write error: $out $err" 9 "$(printf '%s
' "$out" | grep -c 'rc=125$')"
	assertEquals "the ranks went on together" 3 "$(printf '%s
' "$out" | grep -c 'barrier=0$')"
	assertContains "$err" "accelctl: broadcast: write error on standard output: Bad file descriptor"
	assertNotContains "$err" "malformed"
	run ACCELCTL_JOB_ID=closedin$$ -- launch -n 2 --tag -- sh -c '
		if [ $ACCELCTL_RANK = 0 ]; then accelctl broadcast --timeout 20s in <&-; else accelctl broadcast --timeout 20s in; fi
		echo "rc=$?"'
	assertContains "the source's stdin: $out" "$out" "0: rc=125"
	assertContains "$err" "accelctl: broadcast: read error on standard input: Bad file descriptor"
	assertNotContains "$err" "malformed"
}

testReusedNameInLoop() {
	run -- launch -n 3 --tag -- bash -c 'for i in 1 2 3; do accelctl broadcast step "$i.$ACCELCTL_RANK" || exit; done'
	assertRc 0 "loop"
	assertEquals "generations keep their values" "1.0
1.0
1.0
2.0
2.0
2.0
3.0
3.0
3.0" "$(printf '%s\n' "$out" | cut -d' ' -f2 | sort)"
}

testSingleProcess() {
	run -- broadcast x hello
	assertEquals hello "$out"
}

# 16 MiB + 1 is bad input (exit 2 on rank 0; the others learn that it left, 3).
testTooLarge() {
	local d; d=$(scratch); head -c $((16 * 1048576 + 1)) /dev/zero >"$d/huge"
	run -- launch -n 2 --tag -- sh -c 'accelctl broadcast huge <'"$d"'/huge >/dev/null; echo "rc=$?"'
	assertContains "$err" "the value is larger than 16 MiB (16777216 bytes)"
	assertContains "$out" "0: rc=2"
	assertContains "$out" "1: rc=3"
}

# Exactly the documented maximum, on 3 ranks: every byte arrives (its frame is
# larger than 16 MiB: the helper's buffer must hold it).
testSixteenMiB() {
	local d; d=$(scratch)/max; mkdir -p "$d"
	head -c $((16 * 1048576)) /dev/urandom >"$d/in"
	run -- launch -n 3 -- sh -c 'accelctl broadcast max <'"$d"'/in >'"$d"'/out.$ACCELCTL_RANK'
	assertRc 0 "a 16 MiB broadcast"
	local r
	for r in 0 1 2; do
		assertTrue "rank $r got all 16 MiB" "cmp -s $d/in $d/out.$r"
	done
}

testBadName() {
	run -- broadcast 'no good' x
	assertRc 2 "bad name"
	assertErrMatches "accelctl: broadcast: invalid name 'no good'"
}

load_shunit2

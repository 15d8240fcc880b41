# t_fixtures.sh: the binary against every captured and constructed launch: the detected
# values and launcher, that is-main / is-local-main / on-local-process hold on the right
# processes, and where a value is unknown ("null"), that a barrier exits 2 naming what to set.
. "$(dirname "$0")/lib.sh"

# for_launch DIR: sets $files, $exp (expected.tsv without header).
testEveryLaunch() {
	local dir n=0
	for dir in "$FIXTURES"/*/; do
		check_launch "$dir"
		n=$((n + 1))
	done
	assertTrue "found the fixtures" "[ $n -ge 27 ]"
}

check_launch() {
	local dir=$1 name file r w lr ls nr nn launcher mains=0 nodes_with_local_main="" runs=""
	local unknown_nodes=0 local_zeros=0 local_mains=0
	name=$(basename "$dir")
	while IFS=$'\t' read -r file r w lr ls nr nn launcher; do
		[ "$file" = file ] && continue
		run_fixture "$dir/$file" info --json
		assertRc 0 "$name/$file info"
		assertContains "$name/$file" "$out" "\"rank\":$r,\"world_size\":$w,\"local_rank\":$lr,\"local_world_size\":$ls,\"node_rank\":$nr,\"nnodes\":$nn,"
		[ -n "$launcher" ] && assertContains "$name/$file launcher" "$out" "{\"launcher\":\"$launcher\","
		run_fixture "$dir/$file" is-main
		[ "$rc" = 0 ] && mains=$((mains + 1))
		run_fixture "$dir/$file" is-local-main
		[ "$rc" = 0 ] && nodes_with_local_main="$nodes_with_local_main $nr" && local_mains=$((local_mains + 1))
		[ "$lr" = 0 ] && local_zeros=$((local_zeros + 1))
		run_fixture "$dir/$file" on-local-process 0 -- echo "node$nr"
		runs="$runs $out"
		case " $w $ls $nr $nn " in
		*" null "*)
			# Rank questions worked above; a wait cannot, and says what to set.
			run_fixture "$dir/$file" barrier --timeout 5s x
			assertEquals "$name/$file: barrier with a value unknown: $err" 2 "$rc"
			assertContains "$name/$file: names what to set" "$err" "set ACCELCTL_"
			[ "$nr" = null ] && unknown_nodes=1
			;;
		esac
	done <"$dir/expected.tsv"
	assertEquals "$name: exactly one main" 1 "$mains"
	if [ $unknown_nodes = 1 ]; then
		assertEquals "$name: is-local-main on local rank 0" "$local_zeros" "$local_mains"
		return
	fi
	local nodes; nodes=$(cut -f6 "$dir/expected.tsv" | tail -n +2 | sort -u | tr '\n' ' ')
	assertEquals "$name: one local main per node" "$nodes" "$(echo $nodes_with_local_main | tr ' ' '\n' | sort | tr '\n' ' ')"
	assertEquals "$name: on-local-process 0 once per node" \
		"$(for x in $nodes; do printf 'node%s ' "$x"; done)" "$(echo $runs | tr ' ' '\n' | sort | tr '\n' ' ')"
}

load_shunit2

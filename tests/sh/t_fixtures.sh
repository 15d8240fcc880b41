# t_fixtures.sh: the binary against every captured launch: the detected values, and
# that is-main / is-local-main / on-local-process hold on the right processes.
. "$(dirname "$0")/lib.sh"

# for_launch DIR: sets $files, $exp (expected.tsv without header).
testEveryLaunch() {
	local dir n=0
	for dir in "$FIXTURES"/*/; do
		check_launch "$dir"
		n=$((n + 1))
	done
	assertTrue "found the fixtures" "[ $n -ge 10 ]"
}

check_launch() {
	local dir=$1 name file r w lr ls nr nn mains=0 nodes_with_local_main="" runs=""
	name=$(basename "$dir")
	while IFS=$'\t' read -r file r w lr ls nr nn; do
		[ "$file" = file ] && continue
		run_fixture "$dir/$file" info --json
		assertRc 0 "$name/$file info"
		assertContains "$name/$file" "$out" "\"rank\":$r,\"world_size\":$w,\"local_rank\":$lr,\"local_world_size\":$ls,\"node_rank\":$nr,\"nnodes\":$nn,"
		run_fixture "$dir/$file" is-main
		[ "$rc" = 0 ] && mains=$((mains + 1))
		run_fixture "$dir/$file" is-local-main
		[ "$rc" = 0 ] && nodes_with_local_main="$nodes_with_local_main $nr"
		run_fixture "$dir/$file" on-local-process 0 -- echo "node$nr"
		runs="$runs $out"
	done <"$dir/expected.tsv"
	assertEquals "$name: exactly one main" 1 "$mains"
	local nodes; nodes=$(cut -f6 "$dir/expected.tsv" | tail -n +2 | sort -u | tr '\n' ' ')
	assertEquals "$name: one local main per node" "$nodes" "$(echo $nodes_with_local_main | tr ' ' '\n' | sort | tr '\n' ' ')"
	assertEquals "$name: on-local-process 0 once per node" \
		"$(for x in $nodes; do printf 'node%s ' "$x"; done)" "$(echo $runs | tr ' ' '\n' | sort | tr '\n' ' ')"
}

load_shunit2

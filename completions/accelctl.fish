# accelctl.fish: fish completion for accelctl.
#
# The command list copies "accelctl --list-commands" and the options copy
# "accelctl CMD --help": tests/sh/t_docs.sh fails when they drift apart.

# True when the word "--" was typed after a subcommand that runs a command
# (on-*, main-first, launch): what follows is the child command line.
function __accelctl_after_dashdash
    set -l words (commandline -opc)
    set -q words[2]; or return 1
    contains -- $words[2] on-main on-local-main on-process on-local-process main-first launch; or return 1
    contains -- -- $words[3..-1]
end

# True when helper has no action yet (its options, -r URL included, come
# before it) and the word being typed is not the URL of -r/--rendezvous.
function __accelctl_helper_needs_action
    set -l words (commandline -opc)
    test "$words[2]" = helper; or return 1
    set -l value 0
    for w in $words[3..-1]
        if test $value = 1
            set value 0
        else if contains -- $w -r --rendezvous
            set value 1
        else if not string match -q -- '-*' $w
            return 1
        end
    end
    test $value = 0
end

# True when the word being typed is the first after "help": the command whose
# help to print.
function __accelctl_help_needs_command
    set -l words (commandline -opc)
    test (count $words) -eq 2; and test "$words[2]" = help
end

# Complete the child command line after "--" as if typed alone.
function __accelctl_child
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words[3..-1])
    complete -C (string join -- ' ' (string escape -- $words[(math $i + 3)..-1]) (commandline -ct))
end

set -l commands is-main is-local-main on-main on-local-main on-process on-local-process print barrier main-first broadcast abort status info check launch helper rendezvous trace help
set -l runners on-main on-local-main on-process on-local-process

complete -c accelctl -f
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -s h -l help -d 'show a summary of the commands'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -l version -d 'show the version'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -l list-commands -d 'list the commands'

complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a is-main -d 'exit 0 on global rank 0, else 1'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a is-local-main -d 'exit 0 on local rank 0 of each node, else 1'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a on-main -d 'run CMD on global rank 0 only'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a on-local-main -d 'run CMD on local rank 0 of each node'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a on-process -d 'run CMD on global rank N only'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a on-local-process -d 'run CMD on local rank N of each node'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a print -d 'print MSG (or stdin) on local rank 0 of each node only'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a barrier -d 'wait until every rank reached NAME'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a main-first -d 'main runs CMD first; the others after it succeeded'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a broadcast -d "print rank 0's VALUE (or stdin) on every rank"
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a abort -d 'make every waiting rank, now and later, exit 3'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a status -d 'show the waits in flight, or with --history who everyone waited for'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a info -d 'print what was detected, and from which launcher'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a check -d "all-reduce bandwidth test among the nodes' GPUs"
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a launch -d 'start K processes on each of M simulated nodes'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a helper -d "run, start, stop or look at this node's helper"
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a rendezvous -d "start a private redis-server for this job's nodes"
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a trace -d "merge the nodes' traces of a job into one (Perfetto, chrome://tracing)"
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a help -d 'this help, or the help of COMMAND'

# Every subcommand but print (which parses no options) takes -h/--help.
set -l helped is-main is-local-main $runners barrier main-first broadcast abort status info check launch helper rendezvous trace help
complete -c accelctl -n "__fish_seen_subcommand_from $helped; and not __accelctl_after_dashdash" -s h -l help -d 'show help'
complete -c accelctl -n "__fish_seen_subcommand_from print; and test (count (commandline -opc)) -eq 2" -l help -d 'show help'

set -l in_runners "__fish_seen_subcommand_from $runners; and not __accelctl_after_dashdash"
complete -c accelctl -n $in_runners -s w -l wait -d 'the others wait for CMD and exit with its status'
complete -c accelctl -n $in_runners -s t -l timeout -x -d 'with --wait, how long the others wait (default 30m)'

complete -c accelctl -n "__fish_seen_subcommand_from barrier" -s t -l timeout -x -d 'give up after DURATION (90s, 30m, 2h); exit 124'
complete -c accelctl -n "__fish_seen_subcommand_from barrier" -s s -l status -x -d "this rank's status; all exit non-zero if any is"

complete -c accelctl -n "__fish_seen_subcommand_from status" -s H -l history -d 'the last N collectives released here (10; 0: all kept)'
complete -c accelctl -n "__fish_seen_subcommand_from status" -s j -l json -d 'with --history: one JSON object'

set -l in_main_first "__fish_seen_subcommand_from main-first; and not __accelctl_after_dashdash"
complete -c accelctl -n $in_main_first -s l -l local -d "local main of each node first, then that node's others"
complete -c accelctl -n $in_main_first -s t -l timeout -x -d 'how long the others wait (default 30m); exit 124'

complete -c accelctl -n "__fish_seen_subcommand_from broadcast" -s t -l timeout -x -d 'how long to wait for rank 0 (default 30m); exit 124'

complete -c accelctl -n __accelctl_helper_needs_action -s r -l rendezvous -x -d "where the nodes' helpers meet (sets ACCELCTL_RENDEZVOUS)"
complete -c accelctl -n __accelctl_helper_needs_action -a run -d 'serve in the foreground'
complete -c accelctl -n __accelctl_helper_needs_action -a start -d 'start it detached unless it runs'
complete -c accelctl -n __accelctl_helper_needs_action -a stop -d 'stop it (its state stays on disk)'
complete -c accelctl -n __accelctl_helper_needs_action -a status -d 'show it; exit 1 if none runs'

set -l in_rdv "__fish_seen_subcommand_from rendezvous"
complete -c accelctl -n $in_rdv -l bind -x -d "listen on ADDR (default: this host's address)"
complete -c accelctl -n $in_rdv -l port -x -d 'listen on port N (default: a free one)'
complete -c accelctl -n $in_rdv -l dir -r -a '(__fish_complete_directories)' -d "make the job's directory in DIR"
complete -c accelctl -n $in_rdv -l redis-server -r -F -d 'the redis-server to run'
complete -c accelctl -n $in_rdv -l shell -x -a 'sh fish' -d 'print lines for sh (default) or fish'
complete -c accelctl -n $in_rdv -l json -d 'print one JSON object instead'
set -l rdv_action "__fish_seen_subcommand_from rendezvous; and not __fish_seen_subcommand_from start stop status"
complete -c accelctl -n $rdv_action -a start -d 'start it and print the lines to eval'
complete -c accelctl -n $rdv_action -a stop -d 'stop it now'
complete -c accelctl -n $rdv_action -a status -d 'show it; exit 1 if none runs'

set -l in_trace "__fish_seen_subcommand_from trace"
complete -c accelctl -n "$in_trace; and not __fish_seen_subcommand_from merge" -a merge -d "the nodes' traces of a job into one"
complete -c accelctl -n $in_trace -s o -l output -r -F -d 'write the merged trace to FILE (DIR/accelctl.JOB.json)'
complete -c accelctl -n $in_trace -l svg -r -F -d 'also write a timeline of it to FILE, one row per rank'
complete -c accelctl -n $in_trace -s j -l job -x -d 'the job whose traces to merge (the one in DIR)'

# help: the command whose help to print.
complete -c accelctl -n __accelctl_help_needs_command -a "$commands" -d 'its help'

complete -c accelctl -n "__fish_seen_subcommand_from info" -l json -d 'print one JSON object'
complete -c accelctl -n "__fish_seen_subcommand_from info" -l shell -d 'print ACCELCTL_*=value lines for eval'

complete -c accelctl -n "__fish_seen_subcommand_from check" -l min-busbw -x -d 'exit 1 when the bus bandwidth at the largest size is lower'
complete -c accelctl -n "__fish_seen_subcommand_from check" -l iters -x -d 'all-reduces timed per size (20)'
complete -c accelctl -n "__fish_seen_subcommand_from check" -l max-size -x -d 'largest size, 1K to 1G (1G)'
complete -c accelctl -n "__fish_seen_subcommand_from check" -s t -l timeout -x -d 'give up after DURATION (90s, 30m, 2h); exit 124'

set -l in_launch "__fish_seen_subcommand_from launch; and not __accelctl_after_dashdash"
complete -c accelctl -n $in_launch -s n -l nproc -x -d 'processes per node (required)'
complete -c accelctl -n $in_launch -s N -l nnodes -x -d 'simulated nodes (default 1)'
complete -c accelctl -n $in_launch -s l -l tag -d 'prefix each output line with the rank'
complete -c accelctl -n $in_launch -s K -l kill-on-bad-exit -d 'stop the others when one fails'
complete -c accelctl -n $in_launch -s r -l rendezvous -x -d 'ACCELCTL_RENDEZVOUS for the processes (redis://host:port)'

# "--" ends the options of the commands that run CMD; then CMD is completed.
complete -c accelctl -n "__fish_seen_subcommand_from $runners main-first launch; and not __accelctl_after_dashdash" -a -- -d 'end of options: the command to run follows'
complete -c accelctl -n __accelctl_after_dashdash -x -a '(__accelctl_child)'

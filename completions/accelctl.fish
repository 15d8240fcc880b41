# accelctl.fish: fish completion for accelctl.
#
# The command list copies "accelctl --list-commands" and the options copy
# "accelctl CMD --help": tests/sh/t_docs.sh fails when they drift apart.

# True when the word "--" was typed after a subcommand other than print:
# what follows is the child command line.
function __accelctl_after_dashdash
    set -l words (commandline -opc)
    set -q words[2]; or return 1
    test "$words[2]" != print; or return 1
    contains -- -- $words[3..-1]
end

# Complete the child command line after "--" as if typed alone.
function __accelctl_child
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words[3..-1])
    complete -C (string join -- ' ' (string escape -- $words[(math $i + 3)..-1]) (commandline -ct))
end

set -l commands is-main is-local-main on-main on-local-main on-process on-local-process print info launch
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
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a info -d 'print what was detected, and from which launcher'
complete -c accelctl -n "not __fish_seen_subcommand_from $commands" -a launch -d 'start K processes on each of M simulated nodes'

# Every subcommand but print (which parses no options) takes -h/--help.
set -l helped is-main is-local-main $runners info launch
complete -c accelctl -n "__fish_seen_subcommand_from $helped; and not __accelctl_after_dashdash" -s h -l help -d 'show help'
complete -c accelctl -n "__fish_seen_subcommand_from print; and test (count (commandline -opc)) -eq 2" -l help -d 'show help'

complete -c accelctl -n "__fish_seen_subcommand_from info" -l json -d 'print one JSON object'
complete -c accelctl -n "__fish_seen_subcommand_from info" -l shell -d 'print ACCELCTL_*=value lines for eval'

set -l in_launch "__fish_seen_subcommand_from launch; and not __accelctl_after_dashdash"
complete -c accelctl -n $in_launch -s n -l nproc -x -d 'processes per node (required)'
complete -c accelctl -n $in_launch -s N -l nnodes -x -d 'simulated nodes (default 1)'
complete -c accelctl -n $in_launch -s l -l tag -d 'prefix each output line with the rank'
complete -c accelctl -n $in_launch -s K -l kill-on-bad-exit -d 'stop the others when one fails'

# "--" ends the options of the commands that run CMD; then CMD is completed.
complete -c accelctl -n "__fish_seen_subcommand_from $runners launch; and not __accelctl_after_dashdash" -a -- -d 'end of options: the command to run follows'
complete -c accelctl -n __accelctl_after_dashdash -x -a '(__accelctl_child)'

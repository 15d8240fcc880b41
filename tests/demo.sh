#!/bin/sh
# demo.sh: install what is missing, build, and run a 4-process job through
# "accelctl launch" on the embedded default (one node, no Redis): README's demo command.
# Each step says what it does and how long the run has taken.
set -eu
cd "$(dirname "$0")/.."
t0=$(date +%s)
say() { echo "demo.sh: $1 (at $(($(date +%s) - t0)) s)"; }

say "installing what is missing"
sh tests/deps.sh build
say "building"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

PATH="$PWD/build:$PATH"
say "running the demo job"
echo "+ accelctl launch -n 4 --tag -- bash tests/demo-job.sh"
accelctl launch -n 4 --tag -- bash tests/demo-job.sh
say "done"

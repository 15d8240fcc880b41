#!/bin/sh
# demo.sh: install what is missing, build, and run a 4-process job through
# "accelctl launch" on the embedded default (one node, no Redis): README's demo command.
set -eu
cd "$(dirname "$0")/.."

sh tests/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

PATH="$PWD/build:$PATH"
echo "+ accelctl launch -n 4 --tag -- bash tests/demo-job.sh"
accelctl launch -n 4 --tag -- bash tests/demo-job.sh

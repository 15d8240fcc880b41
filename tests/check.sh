#!/bin/sh
# check.sh: the whole test suite from scratch: install what is missing, build, run ctest,
# then build with AddressSanitizer and UndefinedBehaviorSanitizer and run it again.
# This is README's test command, and .ci/run runs exactly this.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

sh tests/deps.sh test

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DACCELCTL_SANITIZE=ON
cmake --build build-asan -j "$jobs"
(cd build-asan && ctest --output-on-failure)

#!/usr/bin/env bash
# Fuzzes the snapshot, log and record decoders with libFuzzer and AddressSanitizer.
#
#   bash Fuzz/run.sh [SECONDS]     (default 60)
#
# New inputs that cover new code go to Fuzz/corpus; crashers to Fuzz/crashers, where the test
# suite's FuzzRegressionTests decode every one of them on each run. Commit both.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
build=.build/fuzz
mkdir -p "$build/include" Fuzz/corpus Fuzz/crashers
cat > "$build/include/module.modulemap" <<MAP
module CPreferencesAtomics {
    header "$PWD/Sources/CPreferencesAtomics/include/CPreferencesAtomics.h"
    export *
}
MAP
# The C target's functions (the waits on shared words, the shared mutex, the checksum, the
# allocation ahead), every file of it, compiled to link in.
objects=()
for source in Sources/CPreferencesAtomics/*.c; do
    object="$build/$(basename "$source" .c).o"
    clang -c -O2 -fsanitize=address -I Sources/CPreferencesAtomics/include "$source" -o "$object"
    objects+=("$object")
done
swiftc -sanitize=fuzzer,address -parse-as-library -module-name Preferences -package-name preferences \
    -swift-version 6 -O \
    -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility \
    -enable-upcoming-feature InternalImportsByDefault \
    -I "$build/include" \
    $(find Sources/Preferences -name '*.swift') Fuzz/FuzzDecoders.swift "${objects[@]}" \
    -o "$build/decoders"
"$build/decoders" Fuzz/corpus -artifact_prefix=Fuzz/crashers/ -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1

#!/usr/bin/env bash
# rocescope reconstruct + check against Wireshark's mergecap on the same emulated run
# (issue 4), side by side in one invocation.
#
#   bench/reconstruct.sh [DATA_PACKETS] [DIR]      (default 50000000, /tmp/reconbench)
#
# The testbed emulator writes a scale run (4096 QPs of WRITE, trimmed copies over two dump
# hosts, Lumina's switch counters) into DIR/run once; then, REPS times (default 3):
#   - mergecap merges the dump pcaps (by timestamp, into pcapng): the reference;
#   - `rocescope reconstruct` merges them by seq into trace.pcapng + records.rsr, and
#     `rocescope check` runs the integrity check over the mapped record file;
#   - the same with `reconstruct --records-only` (what check and analyze need).
# Every step starts after `sync`, with the inputs in the page cache, so no step pays for
# the write-back of the one before, and after a pause of $SETTLE seconds (default 5): on a
# VM that hands freed memory back to the host (virtio-balloon free page reporting, as on
# the machine of docs/benchmarks.md), writing to memory the host has taken back costs
# several times more, and memory freed by the step before (a deleted output) is taken back
# only seconds later; without the pause a step's speed depended on what the step before it
# had freed. Times are wall and CPU (user+sys) seconds from bash's
# `time`; rates are records per second. "vs mergecap" is mergecap's wall time over
# reconstruct+check's. Binaries: $BIN (default target/release, built with fat LTO by
# `cargo build --release -p control -p rocescope-rig`). Lines before and after the table give
# the host's state: how fast it wrote fresh and reused page cache, and the disk.
set -euo pipefail
PACKETS=${1:-50000000}
DIR=${2:-/tmp/reconbench}
REPS=${REPS:-3}
BIN=${BIN:-target/release}
TIMEFORMAT='%R %U %S'
declare -A ratios

"$BIN/rocescope-rig" scale --packets "$PACKETS" -o "$DIR/run" --force >&2
cat "$DIR"/run/dump-*.pcap >/dev/null # into the page cache, as for every step after
records() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packets"])' "$1"; }
timed() { sync; sleep "${SETTLE:-5}"; { time "$@" >/dev/null 2>&1; } 2>&1 | tail -1; }
calc() { python3 -c "print(f'{$1:.2f}')"; }
# The host's state, which moves every figure below (docs/benchmarks.md, "Why the pause"):
# 2 GB written into the page cache after the pause (memory the host has taken back), then
# again at once (memory just freed), and 2 GB written with O_DIRECT (the disk alone).
host_state() {
    local f="$DIR/host-state" fresh warm direct
    rate() { dd if=/dev/zero of="$f" bs=1M count=2048 "$@" 2>&1 | awk '/copied/ {print $(NF-1), $NF}'; }
    rm -f "$f"; sync; sleep "${SETTLE:-5}"
    fresh=$(rate); rm -f "$f"; sync
    warm=$(rate); rm -f "$f"; sync
    direct=$(rate oflag=direct); rm -f "$f"
    echo "host: writing 2 GB into fresh page cache $fresh, into just-freed page cache $warm, to the disk with O_DIRECT $direct"
}
bytes() { du -cb "$@" | tail -1 | cut -f1; }

echo "input: $(calc "$(bytes "$DIR"/run/dump-*.pcap) / 1e9") GB in $(ls "$DIR"/run/dump-*.pcap | wc -l) dump pcaps"
host_state
echo
echo "| rep | records | mergecap wall s (GB out) | output | reconstruct wall s (CPU s) | check wall s (CPU s) | reconstruct+check M rec/s | vs mergecap | check M rec/s/core |"
echo "|---|---|---|---|---|---|---|---|---|"
for rep in $(seq 1 "$REPS"); do
    rm -rf "$DIR/out" "$DIR/merged.pcapng"
    read -r mw _ _ < <(timed mergecap -w "$DIR/merged.pcapng" "$DIR"/run/dump-*.pcap)
    mgb=$(calc "$(bytes "$DIR/merged.pcapng") / 1e9")
    rm -f "$DIR/merged.pcapng"
    for mode in pcapng+records records-only; do
        rm -rf "$DIR/out"
        flag=(); [ "$mode" = records-only ] && flag=(--records-only)
        read -r rw ru rs < <(timed "$BIN/rocescope" reconstruct "$DIR/run" -o "$DIR/out" "${flag[@]}")
        n=$(records "$DIR/out/reconstruct.json")
        gb=$(calc "$(bytes "$DIR"/out/*) / 1e9")
        read -r cw cu cs < <(timed "$BIN/rocescope" check "$DIR/out")
        "$BIN/rocescope" check "$DIR/out" >&2 || true
        ratio=$(calc "$mw / ($rw + $cw)")
        ratios[$mode]+="$ratio "
        echo "| $rep | $n | $mw ($mgb) | $mode, $gb GB | $rw ($(calc "$ru + $rs")) | $cw ($(calc "$cu + $cs")) | $(calc "$n / ($rw + $cw) / 1e6") | $ratio | $(calc "$n / max($cu + $cs, 0.001) / 1e6") |"
    done
done
rm -rf "$DIR/out"
echo
host_state
# One line per output over all repetitions: on a noisy host the median says more than any
# one repetition.
echo
for mode in pcapng+records records-only; do
    python3 -c 'import statistics,sys; r=sorted(map(float, sys.argv[2:])); print(f"{sys.argv[1]}: vs mergecap min {r[0]:.2f}, median {statistics.median(r):.2f}, max {r[-1]:.2f} over {len(r)} repetitions")' "$mode" ${ratios[$mode]}
done

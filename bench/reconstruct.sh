#!/usr/bin/env bash
# rocescope reconstruct + check against Wireshark's mergecap on the same emulated run
# (issue 4), side by side in one invocation.
#
#   bench/reconstruct.sh [DATA_PACKETS] [DIR]      (default 50000000, /tmp/reconbench)
#
# The testbed emulator writes a scale run (4096 QPs of WRITE, trimmed copies over two dump
# hosts, Lumina's switch counters) into DIR/run once; then, REPS times (default 2):
# mergecap merges the dump pcaps (by timestamp, into pcapng), `rocescope reconstruct`
# merges them by seq into trace.pcapng + records.rsr, and `rocescope check` runs the
# integrity check over the mapped record file. Times are wall and CPU (user+sys) seconds
# from bash's `time`; rates are records per second. Binaries: $BIN (default target/release,
# built with fat LTO by `cargo build --release -p control -p rocescope-rig`).
set -euo pipefail
PACKETS=${1:-50000000}
DIR=${2:-/tmp/reconbench}
REPS=${REPS:-2}
BIN=${BIN:-target/release}
TIMEFORMAT='%R %U %S'

"$BIN/rocescope-rig" scale --packets "$PACKETS" -o "$DIR/run" --force >&2
records() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packets"])' "$1"; }
timed() { { time "$@" >/dev/null 2>&1; } 2>&1 | tail -1; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]) / 1e6:.2f}')" "$1" "$2"; }
sum() { python3 -c "import sys; print(f'{float(sys.argv[1]) + float(sys.argv[2]):.2f}')" "$1" "$2"; }

echo "| rep | records | mergecap wall s | reconstruct wall s | reconstruct CPU s | wall speed-up vs mergecap | reconstruct M rec/s (wall) | check wall s | check CPU s | check M rec/s/core (CPU) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for rep in $(seq 1 "$REPS"); do
    rm -rf "$DIR/out" "$DIR/merged.pcapng"
    read -r mw _ _ < <(timed mergecap -w "$DIR/merged.pcapng" "$DIR"/run/dump-*.pcap)
    rm -f "$DIR/merged.pcapng"
    read -r rw ru rs < <(timed "$BIN/rocescope" reconstruct "$DIR/run" -o "$DIR/out")
    n=$(records "$DIR/out/reconstruct.json")
    read -r cw cu cs < <(timed "$BIN/rocescope" check "$DIR/out")
    "$BIN/rocescope" check "$DIR/out" >&2 || true
    rc=$(sum "$ru" "$rs"); cc=$(sum "$cu" "$cs")
    echo "| $rep | $n | $mw | $rw | $rc | $(python3 -c "print(f'{$mw / $rw:.2f}')") | $(rate "$n" "$rw") | $cw | $cc | $(rate "$n" "$cc") |"
done
rm -rf "$DIR/out"

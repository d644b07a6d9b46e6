#!/usr/bin/env bash
# bench/memif.sh — capture throughput of rocescope-dataplane against dpdk-testpmd rxonly,
# both fed the same mirrored-RoCE stream over net_memif, in the same invocation.
#
#   feeder:  stock dpdk-testpmd, io forwarding from net_pcap (rx_pcap=feed, infinite_rx=1)
#            to net_memif (role=server). One forwarding lcore, pinned to --feeder-cpu.
#   clients: (memif role=client, pinned to --client-cpu)
#     testpmd           dpdk-testpmd --forward-mode=rxonly (the reference)
#     rocescope         rocescope-dataplane, --balance rss, 1 worker, shards in --disk-dir
#     rocescope-shm     the same with the shards on tmpfs (/dev/shm): no disk I/O (still the
#                       kernel copy into page cache), to tell CPU limits from disk limits
#     rocescope-dispatch  --balance dispatch: dispatcher + 1 worker (on one CPU if only 2)
#
# Every run: feeder up and forwarding, client connects, --warmup seconds, then a measured
# --window read from the feeder's memif TX counter (testpmd `show port stats`, TSC-timed;
# memif is lossless back-pressure, so what the feeder enqueues is what the client takes),
# then the feeder stops, the client drains and stops, and the loss account is closed:
#   sent (feeder memif TX) = received (client port RX) ; received = written + explained drops.
# Anything else is "unexplained" loss and is reported as such.
#
# Usage: bench/memif.sh [options]      (root; see --help)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ORIG_ARGS=("$@")
TESTPMD=${TESTPMD:-dpdk-testpmd}
DP=${DATAPLANE:-$ROOT/target/release/rocescope-dataplane}
MKFEED=$ROOT/target/release/mkfeed
C2C=$ROOT/target/release/c2c

# ---- options --------------------------------------------------------------------------
WARMUP=3
WINDOW=10
REPS=3
# Dispatch mode needs a dispatcher and a worker besides the feeder: only by default with 4+ CPUs.
CLIENTS="testpmd rocescope rocescope-shm"
(($(nproc) >= 4)) && CLIENTS+=" rocescope-dispatch"
DISPATCH_CPU=2
FRAME_ARGS=()
COUNT=8192
SNAPLEN=128
BUFFER_MB=64
WORK=/var/tmp/rocescope-bench
DISK_DIR=""
SHM_DIR=/dev/shm/rocescope-bench
HUGE=no
FEEDER_CPU=0
CLIENT_CPU=1
NICE=""
# The reference's mbuf pool, as rocescope-dataplane sizes its own for 1 queue x 1024
# descriptors and 1 worker (run.rs: 1024 + 3 x 512 + 2048); testpmd's default is several
# times that, and a bigger pool is a bigger, TLB- and cache-hungrier copy target.
REF_MBUFS=4608
PERF=0
UPDATE_DOC=0
KEEP_SHARDS=0
BUILD=1
REPORT_DIR=""
RS_LCORES=""
MEMIF_ARGS=""
EXTRA_RS_ARGS=()

usage() {
    sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'
    cat <<EOF

Options:
  --window S         measured seconds per run (default $WINDOW)
  --warmup S         seconds from the client's connection to the window (default $WARMUP)
  --reps N           repetitions of every client, interleaved (default $REPS)
  --clients LIST     space-separated, from: testpmd rocescope rocescope-shm rocescope-dispatch
                     (default "$CLIENTS"; rocescope-dispatch by default only with 4+ CPUs)
  --payload B | --frame-len B   feed frame size (mkfeed; default 1024 B payload = 1082-byte frames)
  --count N          frames in the feed pcap (default $COUNT)
  --snaplen B        rocescope --snaplen (default $SNAPLEN)
  --buffer-mb M      rocescope --buffer-mb per core (default $BUFFER_MB)
  --work DIR         feed, logs, results (default $WORK); must not be tmpfs
  --disk-dir DIR     where "rocescope" writes shards (default WORK/runs); must not be tmpfs
  --shm-dir DIR      where "rocescope-shm" writes shards (default $SHM_DIR)
  --huge no|yes|auto 2 MB hugepages for both processes (default $HUGE: memif works and
                     measured the same without them). yes enables 1024 pages if needed (root;
                     left enabled), auto = use them only if already mounted with free pages.
  --feeder-cpu N / --client-cpu N / --dispatch-cpu N   (defaults $FEEDER_CPU / $CLIENT_CPU / $DISPATCH_CPU;
                     the dispatcher shares the client CPU when the machine has no such CPU)
  --rs-lcores MAP    override rocescope's --lcores (default: every lcore @ client CPU)
  --rs-arg ARG       extra rocescope argument (repeatable), e.g. --rs-arg --buffer-mb=256
  --memif-args ARGS  extra net_memif devargs of the clients (the memif client sets up the
                     rings), e.g. rsize=12 or zero-copy=yes (default none)
  --nice N           run in a fresh session whose autogroup gets nice N (see below; default:
                     no change)
  --perf             one extra, unmeasured run per rocescope client under perf (cpu-clock)
  --update-doc       replace the generated section of docs/benchmarks.md
  --keep-shards      keep the shards (default: deleted after each run, manifests kept)
  --no-build         don't run cargo build --release first
  --report DIR       only rebuild the report (and with --update-doc the doc) from a results
                     directory of an earlier invocation

Environment: DATAPLANE=path runs another rocescope-dataplane binary (A/B of a change; the
default is ROOT/target/release/rocescope-dataplane); TESTPMD=path another dpdk-testpmd.

Priority (--nice): on a shared machine other sessions' compilers steal the polling CPUs, and
Linux autogroups make plain nice values session-local; with --nice N the script re-executes
itself in a new session (setsid) and gives that session's autogroup nice N. Careful: the
pollers never sleep, and at -20 the per-CPU kernel workers of their CPUs starved ("workqueue
lockup ... stuck for 57s", virtio-balloon and vsock work), which hung DPDK shutdown and perf.
Without --nice, watch the "all other threads" CPU column of each run instead.
EOF
}

while [[ $# -gt 0 ]]; do
    case $1 in
        --window) WINDOW=$2; shift 2 ;;
        --warmup) WARMUP=$2; shift 2 ;;
        --reps) REPS=$2; shift 2 ;;
        --clients) CLIENTS=$2; shift 2 ;;
        --payload) FRAME_ARGS=(--payload "$2"); shift 2 ;;
        --frame-len) FRAME_ARGS=(--frame-len "$2"); shift 2 ;;
        --count) COUNT=$2; shift 2 ;;
        --snaplen) SNAPLEN=$2; shift 2 ;;
        --buffer-mb) BUFFER_MB=$2; shift 2 ;;
        --work) WORK=$2; shift 2 ;;
        --disk-dir) DISK_DIR=$2; shift 2 ;;
        --shm-dir) SHM_DIR=$2; shift 2 ;;
        --huge) HUGE=$2; shift 2 ;;
        --feeder-cpu) FEEDER_CPU=$2; shift 2 ;;
        --client-cpu) CLIENT_CPU=$2; shift 2 ;;
        --dispatch-cpu) DISPATCH_CPU=$2; shift 2 ;;
        --rs-lcores) RS_LCORES=$2; shift 2 ;;
        --rs-arg) EXTRA_RS_ARGS+=("$2"); shift 2 ;;
        --memif-args) MEMIF_ARGS=",$2"; shift 2 ;;
        --nice) NICE=$2; shift 2 ;;
        --perf) PERF=1; shift ;;
        --update-doc) UPDATE_DOC=1; shift ;;
        --keep-shards) KEEP_SHARDS=1; shift ;;
        --no-build) BUILD=0; shift ;;
        --report) REPORT_DIR=$2; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "memif.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
DISK_DIR=${DISK_DIR:-$WORK/runs}

if [[ -n $REPORT_DIR ]]; then
    [[ -f $REPORT_DIR/config.env ]] || { echo "memif.sh: no config.env in $REPORT_DIR" >&2; exit 2; }
    update=$UPDATE_DOC
    source "$REPORT_DIR/config.env"
    OUT=$REPORT_DIR UPDATE_DOC=$update
    REPORT_ONLY=1
fi

# A fresh session, so that its autogroup (and only it) can be given another nice value.
if [[ -n $NICE && -z ${RSBENCH_SESSION:-} && -z ${REPORT_ONLY:-} ]]; then
    export RSBENCH_SESSION=1
    exec setsid --wait "$0" "${ORIG_ARGS[@]}" </dev/null
fi

log() { printf '[memif.sh %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $(id -u) == 0 ]] || die "run as root (DPDK vdevs, hugepages, perf)"
command -v "$TESTPMD" >/dev/null || die "$TESTPMD not found (apt-get install dpdk)"
command -v jq >/dev/null || die "jq not found (apt-get install jq)"
for c in $CLIENTS; do
    case $c in testpmd|rocescope|rocescope-shm|rocescope-dispatch) ;; *) die "unknown client $c" ;; esac
done
if [[ -n $NICE && -w /proc/self/autogroup && -z ${REPORT_ONLY:-} ]]; then
    echo "$NICE" >/proc/self/autogroup && log "priority: $(cat /proc/self/autogroup)"
fi

if [[ -z ${REPORT_ONLY:-} ]]; then
# ---- build, feed, directories -----------------------------------------------------------
if [[ $BUILD == 1 ]]; then
    log "building (release)"
    (cd "$ROOT" && cargo build --release -q -p dataplane -p rocescope-bench)
fi
[[ -x $DP && -x $MKFEED && -x $C2C ]] || die "missing $DP, $MKFEED or $C2C (cargo build --release)"

STAMP=$(date +%Y%m%d-%H%M%S)
OUT=$WORK/$STAMP
mkdir -p "$OUT" "$DISK_DIR" "$SHM_DIR"
for d in "$OUT" "$DISK_DIR"; do
    [[ $(stat -f -c %T "$d") != tmpfs ]] || die "$d is on tmpfs; --work/--disk-dir must be a real disk"
done
FEED=$OUT/feed.pcap
"$MKFEED" -o "$FEED" -n "$COUNT" "${FRAME_ARGS[@]}" | tee "$OUT/feed.txt" >&2
FRAME_LEN=$(grep -o 'frames of [0-9]*' "$OUT/feed.txt" | grep -o '[0-9]*$')

# ---- hugepages -------------------------------------------------------------------------
huge_ready() {
    mount | grep -q ' type hugetlbfs ' && (($(awk '/HugePages_Free/ {print $2}' /proc/meminfo) >= 600))
}
case $HUGE in
    yes)
        if ! huge_ready; then
            log "enabling 1024 x 2 MB hugepages"
            echo 1024 >/proc/sys/vm/nr_hugepages
            mount | grep -q ' type hugetlbfs ' || { mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages; }
            huge_ready || die "could not get 600 free hugepages"
        fi
        MEM=(-m 512 --huge-unlink) ;;
    auto) if huge_ready; then HUGE=yes; MEM=(-m 512 --huge-unlink); else HUGE=no; MEM=(--no-huge -m 1024); fi ;;
    no) MEM=(--no-huge -m 1024) ;;
    *) die "--huge auto|yes|no" ;;
esac
log "hugepages: $HUGE (EAL memory: ${MEM[*]})"
fi

# ---- process bookkeeping and cleanup -----------------------------------------------------
PIDS=()
TAG_PREFIX=rsbench$$
cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null && kill "$p" 2>/dev/null || true
    done
    sleep 0.5
    # PIDS are the `timeout` wrappers, which pass TERM on; whatever is still alive is killed,
    # the DPDK process (the wrapper's child) first so that it cannot be orphaned.
    for p in "${PIDS[@]:-}"; do
        [[ -n $p ]] && kill -0 "$p" 2>/dev/null || continue
        pkill -9 -P "$p" 2>/dev/null || true
        kill -9 "$p" 2>/dev/null || true
    done
    rm -f /tmp/"$TAG_PREFIX"-*.sock
    rm -rf /var/run/dpdk/"$TAG_PREFIX"-* 2>/dev/null || true
    rm -f /dev/hugepages/"$TAG_PREFIX"-* 2>/dev/null || true
    rm -rf "${SHM_DIR:?}"/"$TAG_PREFIX"-* 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

HZ=$(getconf CLK_TCK)
now() { date +%s.%N; }
# An interruptible sleep: traps run during `wait`, not during a foreground `sleep`.
nap() { sleep "$1" & wait $!; }

# Per-thread CPU ticks of the feeder and the client ("role:thread ticks" lines) and the
# /proc/stat total.
cpu_snap() {
    local role p t
    for role in feeder client; do
        p=$1; shift
        for t in /proc/"$p"/task/*; do
            [[ -r $t/stat ]] || continue
            printf '%s %s:%s %s\n' "$p" "$role" "$(tr ' ' '_' <"$t/comm")" "$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null || echo 0)"
        done
    done
    awk '/^cpu / {print "ALL busy", $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

# Sends an interactive command to a testpmd (fd, name for the log, command).
tell() {
    echo "$3" >&"$1"
    echo "$(now) $2 $3" >>"$rd/commands.log"
}

# The DPDK process's pid behind `timeout`.
child_of() { pgrep -P "$1" | head -1; }

# Whether the feeder's memif port (1) says a client is connected.
feeder_linked() {
    tell "$ffd" feeder "show port info 1"
    sleep 0.4
    grep -qs 'Link status: up' "$rd/feeder.log"
}

wait_for() { # seconds, command...
    local t=$1; shift
    local end=$((SECONDS + t))
    until "$@"; do
        ((SECONDS < end)) || return 1
        sleep 0.1
    done
}

# ---- one run ------------------------------------------------------------------------------
# Writes RUNDIR/result.env with the numbers of one client run.
run_one() {
    local client=$1 rep=$2 profile=${3:-0}
    local tag=$TAG_PREFIX-$client-$rep
    local rd=$OUT/$client-$rep
    [[ $profile == 1 ]] && rd=$OUT/$client-perf
    mkdir -p "$rd"
    local sock=/tmp/$tag.sock
    rm -f "$sock" "$rd"/*.in
    log "run $client rep $rep$([[ $profile == 1 ]] && echo " (under perf, not measured)")"

    # Core-to-core latency right before the run: on a VM it tells the host's vCPU placement.
    local c2c_ns
    c2c_ns=$("$C2C" "$FEEDER_CPU" "$CLIENT_CPU" -n 100000 | grep -o '[0-9]* ns' | grep -o '[0-9]*') || c2c_ns=0

    mkfifo "$rd/feeder.in"
    local ffd cfd=""
    exec {ffd}<>"$rd/feeder.in"
    echo "$TESTPMD --lcores 0@$FEEDER_CPU,1@$FEEDER_CPU ${MEM[*]} --no-pci --file-prefix $tag-feed --log-level=lib.eal:warning" \
        "--vdev net_pcap0,rx_pcap=$FEED,infinite_rx=1 --vdev net_memif0,role=server,socket=$sock,socket-abstract=no" \
        "-- -i --forward-mode=io --nb-cores=1 --total-num-mbufs=$((COUNT + 16384))" >"$rd/feeder.cmd"
    timeout $((WARMUP + WINDOW + 90)) stdbuf -oL "$TESTPMD" --lcores "0@$FEEDER_CPU,1@$FEEDER_CPU" "${MEM[@]}" --no-pci \
        --file-prefix "$tag-feed" --log-level=lib.eal:warning \
        --vdev "net_pcap0,rx_pcap=$FEED,infinite_rx=1" \
        --vdev "net_memif0,role=server,socket=$sock,socket-abstract=no" \
        -- -i --forward-mode=io --nb-cores=1 --total-num-mbufs=$((COUNT + 16384)) \
        <"$rd/feeder.in" >"$rd/feeder.log" 2>&1 &
    local feeder_t=$!
    PIDS+=("$feeder_t")
    wait_for 60 grep -qs 'testpmd>' "$rd/feeder.log" || die "feeder did not start: $rd/feeder.log"
    [[ -S $sock ]] || die "feeder has no memif socket $sock"
    local feeder
    feeder=$(child_of "$feeder_t")
    tell "$ffd" feeder start

    local client_t cmd=() run_dir="" cmem=("${MEM[@]}")
    # memif zero-copy (client side) maps the client's memory as one file per segment list.
    # (--huge-unlink cannot be combined with it: the files are removed by the cleanup).
    if [[ $MEMIF_ARGS == *zero-copy=yes* ]]; then
        cmem=("${cmem[@]/--huge-unlink/}")
        cmem=(${cmem[@]} --single-file-segments)
    fi
    case $client in
        testpmd)
            mkfifo "$rd/client.in"
            exec {cfd}<>"$rd/client.in"
            cmd=("$TESTPMD" --lcores "0@$CLIENT_CPU,1@$CLIENT_CPU" "${cmem[@]}" --no-pci --file-prefix "$tag-cli"
                --log-level=lib.eal:warning --vdev "net_memif0,role=client,socket=$sock,socket-abstract=no$MEMIF_ARGS"
                -- -i --forward-mode=rxonly --nb-cores=1 --total-num-mbufs=$REF_MBUFS)
            echo "${cmd[*]}" >"$rd/client.cmd"
            timeout $((WARMUP + WINDOW + 60)) stdbuf -oL "${cmd[@]}" <"$rd/client.in" >"$rd/client.log" 2>&1 &
            client_t=$!
            wait_for 60 grep -qs 'testpmd>' "$rd/client.log" || die "client testpmd did not start: $rd/client.log"
            tell "$cfd" client start
            ;;
        rocescope*)
            local lcores=${RS_LCORES:-"0@$CLIENT_CPU,1@$CLIENT_CPU"} balance=rss
            if [[ $client == rocescope-dispatch ]]; then
                # Dispatcher (lcore 1) on its own CPU when there is one; else all on the client CPU.
                local dcpu=$CLIENT_CPU
                (($(nproc) > DISPATCH_CPU && DISPATCH_CPU != FEEDER_CPU && DISPATCH_CPU != CLIENT_CPU)) && dcpu=$DISPATCH_CPU
                lcores=${RS_LCORES:-"0@$CLIENT_CPU,1@$dcpu,2@$CLIENT_CPU"}
                balance=dispatch
            fi
            run_dir=$DISK_DIR/$tag
            [[ $client == rocescope-shm ]] && run_dir=$SHM_DIR/$tag
            rm -rf "$run_dir"
            cmd=("$DP" --lcores "$lcores" "${cmem[@]}" --no-pci --file-prefix "$tag-cli" --log-level=lib.eal:warning
                --vdev "net_memif0,role=client,socket=$sock,socket-abstract=no$MEMIF_ARGS"
                -- -o "$run_dir" --balance "$balance" --snaplen "$SNAPLEN" --buffer-mb "$BUFFER_MB"
                --stop-when-idle 2 --stats-interval 1 "${EXTRA_RS_ARGS[@]}")
            echo "${cmd[*]}" >"$rd/client.cmd"
            timeout $((WARMUP + WINDOW + 60)) "${cmd[@]}" >"$rd/client.log" 2>&1 &
            client_t=$!
            ;;
    esac
    PIDS+=("$client_t")
    local t_launch client_pid
    t_launch=$(now)
    sleep 0.3
    client_pid=$(child_of "$client_t")

    # The warm-up counts from the client's connection, which takes seconds with zero-copy
    # (the client maps all its memory to the feeder first).
    wait_for 60 feeder_linked || log "warning: the client did not connect within 60 s (see $rd/feeder.log)"
    nap "$WARMUP"
    local t1 t2
    t1=$(now)
    cpu_snap "$feeder" "$client_pid" >"$rd/cpu1"
    tell "$ffd" feeder "show port stats 1"
    [[ -z $cfd ]] || tell "$cfd" client "show port stats 0"
    local perf_pid=""
    if [[ $profile == 1 ]]; then
        # perf record -p ... -- sleep N waits for the target, not the sleep: time it out.
        # (and may not get the CPU to act on SIGINT when pollers fill both CPUs: -k).
        timeout -k 5 -s INT "$WINDOW" perf record -e cpu-clock -F 1999 -p "$client_pid" -o "$rd/perf.data" \
            >"$rd/perf-record.log" 2>&1 &
        perf_pid=$!
    fi
    nap "$WINDOW"
    t2=$(now)
    cpu_snap "$feeder" "$client_pid" >"$rd/cpu2"
    tell "$ffd" feeder "show port stats 1"
    [[ -z $cfd ]] || tell "$cfd" client "show port stats 0"
    sleep 0.3
    tell "$ffd" feeder stop
    wait_for 20 grep -qs 'Accumulated forward statistics' "$rd/feeder.log" ||
        log "warning: the feeder did not stop within 20 s (see $rd/feeder.log)"
    echo "$(now) feeder stopped" >>"$rd/commands.log"

    # Drain: rocescope stops by itself after 2 s idle; testpmd is told to.
    if [[ -n $cfd ]]; then
        sleep 1
        tell "$cfd" client "show port stats 0"
        tell "$cfd" client stop
        wait_for 20 grep -qs 'Accumulated forward statistics' "$rd/client.log" || log "warning: client testpmd did not stop"
        tell "$cfd" client quit
    elif ! wait_for 15 eval '! kill -0 "$client_pid" 2>/dev/null'; then
        log "warning: rocescope still receiving 15 s after the feeder stopped; interrupting it"
        kill -INT "$client_pid" 2>/dev/null || true
    fi
    local rc=0
    wait "$client_t" || rc=$?
    ((rc == 0)) || log "warning: client exited with $rc (see $rd/client.log)"
    echo "$(now) client exited $rc" >>"$rd/commands.log"
    [[ -z $perf_pid ]] || wait "$perf_pid" || true
    tell "$ffd" feeder quit
    rc=0
    wait "$feeder_t" || rc=$?
    ((rc == 0)) || log "warning: feeder exited with $rc (see $rd/feeder.log)"
    exec {ffd}>&-
    [[ -n $cfd ]] && exec {cfd}>&-
    PIDS=()
    rm -f "$sock" "$rd"/*.in

    # ---- numbers ----
    local win=$(awk -v a="$t1" -v b="$t2" 'BEGIN {printf "%.3f", b - a}')
    # feeder: the two `show port stats 1` blocks, then the forward stats of port 1 at stop.
    local feed_pps feed_tx1=0 feed_tx2=0 sent=0 offered_drop=0
    read -r feed_tx1 feed_tx2 < <(awk '/NIC statistics for port 1/ {grab = 1} grab && /TX-packets:/ {printf "%s ", $2; grab = 0} END {print ""}' "$rd/feeder.log") || true
    feed_pps=$(awk '/NIC statistics for port 1/ {grab = 1} grab && /Tx-pps:/ {v = $2; grab = 0} END {print v + 0}' "$rd/feeder.log")
    read -r sent offered_drop < <(awk '/Forward statistics for port 1/ {grab = 1} grab && /TX-packets:/ {print $2, $4; grab = 0}' "$rd/feeder.log") || true
    sent=${sent:-0} feed_tx1=${feed_tx1:-0} feed_tx2=${feed_tx2:-0}
    local win_pkts=$((feed_tx2 - feed_tx1))
    local received written explained explained_kind own_pps own_busy=-
    case $client in
        testpmd)
            # The port counter (the last `show port stats 0`, after the drain), like rocescope's
            # port.ipackets; testpmd's forward stats only count from its `start`.
            received=$(awk '/NIC statistics for port 0/ {grab = 1} grab && /RX-packets:/ {v = $2; grab = 0} END {print v + 0}' "$rd/client.log")
            local missed nombuf
            missed=$(awk '/NIC statistics for port 0/ {grab = 1} grab && /RX-missed:/ {v = $4; grab = 0} END {print v + 0}' "$rd/client.log")
            nombuf=$(awk '/NIC statistics for port 0/ {grab = 1} grab && /RX-nombuf:/ {v = $2; grab = 0} END {print v + 0}' "$rd/client.log")
            written=$received
            explained=$((missed + nombuf))
            explained_kind="imissed $missed, rx_nombuf $nombuf"
            own_pps=$(awk '/NIC statistics for port 0/ {grab = 1} grab && /Rx-pps:/ {n++; if (n == 2) v = $2; grab = 0} END {print v + 0}' "$rd/client.log")
            ;;
        rocescope*)
            local m=$run_dir/manifest.json
            [[ -f $m ]] || die "no manifest in $run_dir (see $rd/client.log)"
            cp "$m" "$rd/manifest.json"
            jq -e '.status == "complete"' "$m" >/dev/null || log "warning: manifest status is not complete"
            received=$(jq '.port.ipackets' "$m")
            written=$(jq '[.cores[].written] | add' "$m")
            local bdrop wfail rdrop imissed nombuf over core_rx
            bdrop=$(jq '[.cores[].buffer_drops] | add' "$m")
            wfail=$(jq '[.cores[].write_failed] | add' "$m")
            over=$(jq '[.cores[].over_limit] | add' "$m")
            rdrop=$(jq '[.dispatcher.ring_drops // [] | .[]] | add // 0' "$m")
            imissed=$(jq '.port.imissed' "$m")
            nombuf=$(jq '.port.rx_nombuf' "$m")
            core_rx=$(jq '[.cores[].rx] | add' "$m")
            explained=$((bdrop + wfail + rdrop + over + imissed + nombuf))
            explained_kind="buffer_drops $bdrop, ring_drops $rdrop, write_failed $wfail, imissed $imissed, rx_nombuf $nombuf"
            # The port counter must agree with what the stages counted.
            local stage_rx=$core_rx
            [[ $client == rocescope-dispatch ]] && stage_rx=$(jq '.dispatcher.rx' "$m")
            [[ $stage_rx == "$received" ]] || log "warning: port ipackets $received != stage rx $stage_rx"
            # Client's own rate in (about) the window: mean of the stats lines inside it.
            own_pps=$(awk -v a="$(awk -v x="$t1" -v l="$t_launch" 'BEGIN {print x - l}')" \
                -v b="$(awk -v x="$t2" -v l="$t_launch" 'BEGIN {print x - l}')" '
                /^\[ *[0-9.]+s\] rx/ { t = substr($1 $2, 2) + 0; if (t > a + 0.5 && t <= b + 0.5) { s += $4; n++ } }
                END { if (n) printf "%.0f", s / n * 1e6; else print 0 }' "$rd/client.log")
            # The workers' busy and off-CPU shares in the window (same lines), as "busy/off".
            # Busy and idle time both include the time the worker was off its CPU (the
            # writer or the kernel ran there): busy below 100 % with off-CPU near 0 means
            # the client waited for the feeder.
            own_busy=$(awk -v a="$(awk -v x="$t1" -v l="$t_launch" 'BEGIN {print x - l}')" \
                -v b="$(awk -v x="$t2" -v l="$t_launch" 'BEGIN {print x - l}')" '
                /^\[ *[0-9.]+s\] rx/ { t = substr($1 $2, 2) + 0; if (t > a + 0.5 && t <= b + 0.5)
                    for (i = 1; i < NF; i++) {
                        v = $(i + 1); sub("%", "", v)
                        if ($i == "busy") { s += v; n++ }
                        if ($i == "off-cpu" && v != "-") { o += v; m++ }
                    } }
                END { if (!n) { print "-"; exit } printf "%.0f/%s", s / n, m ? sprintf("%.0f", o / m) : "-" }' "$rd/client.log")
            if [[ $KEEP_SHARDS == 0 ]]; then rm -f "$run_dir"/shard-*.pcapng; fi
            ;;
    esac
    local unexplained=$((sent - written - explained))
    # A run counts only if the feeder's final count covers the window (memif resets its
    # counters when the peer disconnects; a stop processed after that would read 0).
    local valid=yes
    if ((sent < feed_tx2 || feed_tx2 <= feed_tx1)); then
        valid=no
        log "warning: invalid run: feeder sent $sent < its count at the window end $feed_tx2"
    fi
    # CPU over the window: per interesting thread, and what other processes used.
    local cpu_line
    cpu_line=$(awk -v hz="$HZ" -v w="$win" '
        FNR == NR { a[$1 " " $2] += $3; next }
        { k = $1 " " $2; if (!(k in b)) order[++n] = k; b[k] += $3 }
        END {
            total = (b["ALL busy"] - a["ALL busy"]) / hz / w
            ours = 0
            for (i = 1; i <= n; i++) { k = order[i]; if (k == "ALL busy") continue
                d = (b[k] - a[k]) / hz / w; ours += d
                split(k, kk, " ")
                if (d >= 0.02) out = out sprintf("%s%s %.0f%%", out == "" ? "" : ", ", kk[2], d * 100) }
            printf "%s; all other threads %.0f%%", out, (total - ours) * 100
        }' "$rd/cpu1" "$rd/cpu2")
    cat >"$rd/result.env" <<EOF
client=$client
rep=$rep
window_s=$win
feeder_tx_pps=$feed_pps
window_pkts=$win_pkts
client_own_pps=$own_pps
client_busy=$own_busy
sent=$sent
offered_not_sent=$offered_drop
received=$received
written=$written
explained=$explained
explained_kind="$explained_kind"
unexplained=$unexplained
cpu="$cpu_line"
c2c_ns=$c2c_ns
valid=$valid
EOF
    log "  $client: $(awk -v p="$feed_pps" 'BEGIN {printf "%.3f Mpps", p / 1e6}') in window (c2c $c2c_ns ns); sent $sent received $received written $written explained $explained unexplained $unexplained; cpu: $cpu_line$([[ $own_busy != - ]] && echo "; worker busy/off-CPU $own_busy %")"
}

# ---- disk speed -----------------------------------------------------------------------
disk_speed() {
    local f=$DISK_DIR/dd.$$ r1 r2
    r1=$(dd if=/dev/zero of="$f" bs=4M count=512 conv=fdatasync 2>&1 | awk -F, '/copied/ {gsub(/^ +/, "", $NF); print $NF}')
    r2=$(dd if=/dev/zero of="$f" bs=4M count=512 oflag=direct 2>&1 | awk -F, '/copied/ {gsub(/^ +/, "", $NF); print $NF}')
    rm -f "$f"
    echo "buffered 4 MiB writes + fdatasync: $r1; O_DIRECT 4 MiB writes: $r2 (2 GiB each, dd)"
}

# ---- report ---------------------------------------------------------------------------------
median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
field() { (source "$1"; eval "echo \"\${$2}\""); }
valid() { [[ -f $1 ]] && [[ $(field "$1" valid) == yes ]]; }

# A run counts if it is valid and other processes left the CPUs alone (the "all other
# threads" share of the window above BUSY_PCT % of a CPU means someone else was running).
BUSY_PCT=30
others_pct() { field "$1" cpu | grep -o 'all other threads [0-9]*' | grep -o '[0-9]*$' || echo 0; }
counts() { valid "$1" && (($(others_pct "$1") <= BUSY_PCT)); }

write_report() {
    REPORT=$OUT/results.md
    {
        echo "Run $STAMP: feed $(sed 's/^mkfeed: //' "$OUT/feed.txt")"
        echo
        echo "Machine: $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2; exit}'), $(nproc) CPUs," \
            "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) RAM, kernel $(uname -r)," \
            "DPDK $(pkg-config --modversion libdpdk 2>/dev/null || echo '?'), hugepages: $HUGE." \
            "Shard disk $DISK_DIR ($(df --output=source "$DISK_DIR" | tail -1)): $DISK_SPEED."
        echo
        echo "Dataplane: $DP ($DP_VERSION)$([[ -n $MEMIF_ARGS ]] && echo "; client memif devargs: ${MEMIF_ARGS#,}")$([[ ${#EXTRA_RS_ARGS[@]} -gt 0 ]] && echo "; extra rocescope args: ${EXTRA_RS_ARGS[*]}")$([[ -n $RS_LCORES ]] && echo "; rocescope --lcores $RS_LCORES")."
        echo
        echo "Window $WINDOW s after $WARMUP s warm-up, $REPS repetitions interleaved; snaplen $SNAPLEN, buffer $BUFFER_MB MiB/core;" \
            "feeder on CPU $FEEDER_CPU, client on CPU $CLIENT_CPU; priority: $([[ -n $NICE ]] && echo "own autogroup, nice $NICE" || echo "default (no --nice)")."
        echo
        echo "| client | rep | Mpps (feeder TX in window) | Gbit/s | client's own Mpps | worker busy % / off-CPU % | sent | received | written | explained drops | unexplained | CPU in window | c2c ns |"
        echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for rep in $(seq 1 $((REPS + 1))); do
            for c in $CLIENTS; do
                f=$OUT/$c-$rep/result.env
                [[ -f $f ]] || continue
                (
                    source "$f"
                    awk -v c="$client" -v r="$rep$([[ $valid == yes ]] || echo ' (invalid)')$(counts "$f" || [[ $valid != yes ]] || echo " (busy)")" -v p="$feeder_tx_pps" -v o="$client_own_pps" -v bz="${client_busy:--}" -v fl="$FRAME_LEN" \
                        -v s="$sent" -v rc="$received" -v w="$written" -v e="$explained" -v ek="$explained_kind" -v u="$unexplained" -v cpu="$cpu" -v cc="$c2c_ns" \
                        'BEGIN {printf "| %s | %s | %.3f | %.1f | %.3f | %s | %d | %d | %d | %d (%s) | %d | %s | %s |\n",
                            c, r, p / 1e6, p * fl * 8 / 1e9, o / 1e6, bz, s, rc, w, e, ek, u, cpu, cc}'
                )
            done
        done
        echo
        echo "Summary. Mpps: median over the repetitions of the feeder's memif TX rate in the window (= what the"
        echo "client took; Gbit/s counts frame bytes). ratio: each client run divided by the mean of the two"
        echo "testpmd runs around it (before and after, same invocation), median over repetitions; a pair whose"
        echo "two references differ by more than 1.5x (the host changed regime) is marked ~ and left out of the"
        echo "median (if no pair is stable, the median of all, marked ~). Runs marked (busy) in the table above"
    echo "(other processes took more than $BUSY_PCT % of a CPU in the window) are left out. recorded: the rate at which packets"
        echo "reached the shard, Mpps x written/sent (whole run)."
        echo
        echo "| client | Mpps | Gbit/s | recorded Mpps | ratio | recorded ratio | per-rep ratios | unexplained loss |"
        echo "|---|---|---|---|---|---|---|---|"
        for c in $CLIENTS; do
            if [[ $c == testpmd ]]; then
                runs=$(for rep in $(seq 1 $((REPS + 1))); do f=$OUT/testpmd-$rep/result.env; if counts "$f"; then field "$f" feeder_tx_pps; fi; done)
                pps=$(median <<<"$runs")
                awk -v p="$pps" -v fl="$FRAME_LEN" -v all="$(awk '{printf "%s%.2f", (NR > 1 ? " " : ""), $1 / 1e6}' <<<"$runs")" \
                    'BEGIN {printf "| testpmd (reference) | %.3f | %.1f | %.3f | 1 | 1 | runs (Mpps): %s | 0 |\n", p / 1e6, p * fl * 8 / 1e9, p / 1e6, all}'
                continue
            fi
            pps=$(for rep in $(seq 1 "$REPS"); do f=$OUT/$c-$rep/result.env; if counts "$f"; then field "$f" feeder_tx_pps; fi; done | median)
            rec=$(for rep in $(seq 1 "$REPS"); do f=$OUT/$c-$rep/result.env; ! counts "$f" || (source "$f"; awk -v p="$feeder_tx_pps" -v w="$written" -v s="$sent" 'BEGIN {print (s > 0 ? p * w / s : 0)}'); done | median)
            # per rep: "ratio recorded_ratio stable" against the neighbouring references
            pairs=$(for rep in $(seq 1 "$REPS"); do
                f=$OUT/$c-$rep/result.env; g=$OUT/testpmd-$rep/result.env; h=$OUT/testpmd-$((rep + 1))/result.env
                counts "$f" || continue
                r1=0 r2=0
                if counts "$g"; then r1=$(field "$g" feeder_tx_pps); fi
                if counts "$h"; then r2=$(field "$h" feeder_tx_pps); fi
                (source "$f"; awk -v p="$feeder_tx_pps" -v w="$written" -v s="$sent" -v a="$r1" -v b="$r2" 'BEGIN {
                    if (a > 0 && b > 0) { ref = (a + b) / 2; stable = (a > b ? a / b : b / a) <= 1.5 }
                    else { ref = a + b; stable = 1 }
                    if (ref > 0) printf "%.3f %.3f %d\n", p / ref, (s > 0 ? p * w / s : 0) / ref, stable }')
            done)
            # No stable pair at all: the median of all of them, marked ~.
            local_mark=""
            grep -q ' 1$' <<<"$pairs" && stable_only='$3 == 1' || { stable_only=1; local_mark="~"; }
            ratio=$(awk "$stable_only"' {print $1}' <<<"$pairs" | median)
            rratio=$(awk "$stable_only"' {print $2}' <<<"$pairs" | median)
            shown=$(awk '{printf "%s%.2f%s", (NR > 1 ? " " : ""), $1, ($3 == 1 ? "" : "~")}' <<<"$pairs")
            unexp=$(for rep in $(seq 1 "$REPS"); do f=$OUT/$c-$rep/result.env; if [[ -f $f ]]; then field "$f" unexplained; fi; done | awk '{s += $1} END {print s + 0}')
            awk -v c="$c" -v p="$pps" -v q="$rec" -v r="$ratio" -v rr="$rratio" -v fl="$FRAME_LEN" -v pr="$shown" -v u="$unexp" -v m="$local_mark" \
                'BEGIN {printf "| %s | %.3f | %.1f | %.3f | %.2f%s | %.2f%s | %s | %d |\n", c, p / 1e6, p * fl * 8 / 1e9, q / 1e6, r, m, rr, m, pr, u}'
        done
        if [[ $PERF == 1 ]]; then
            for c in $CLIENTS; do
                [[ -s $OUT/$c-perf/profile.txt ]] && grep -q '%' "$OUT/$c-perf/profile.txt" || continue
                echo
                echo "perf profile of $c (cpu-clock, one unmeasured run, top symbols):"
                echo
                echo '```'
                cat "$OUT/$c-perf/profile.txt"
                echo '```'
            done
        fi
    } >"$REPORT"
    cat "$REPORT"
}

update_doc() {
    DOC=$ROOT/docs/benchmarks.md
    begin='<!-- memif.sh results: begin -->'
    end='<!-- memif.sh results: end -->'
    if [[ -f $DOC ]] && grep -qF "$begin" "$DOC" && grep -qF "$end" "$DOC"; then
        awk -v b="$begin" -v e="$end" -v f="$REPORT" '
            $0 == b { print; while ((getline l < f) > 0) print l; skip = 1; next }
            $0 == e { skip = 0 }
            !skip' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
        log "updated $DOC"
    else
        log "no generated section in $DOC; not updating (add the $begin / $end markers)"
    fi
}

if [[ -n ${REPORT_ONLY:-} ]]; then
    write_report
    if [[ $UPDATE_DOC == 1 ]]; then
        update_doc
    fi
    exit 0
fi

# ---- main -------------------------------------------------------------------------------
log "results in $OUT"
DISK_SPEED=$(disk_speed)
log "disk ($DISK_DIR): $DISK_SPEED"
DP_VERSION="$(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo '?')"
# What the report needs, for --report.
declare -p STAMP REPS CLIENTS FRAME_LEN DISK_SPEED DISK_DIR HUGE DP DP_VERSION MEMIF_ARGS EXTRA_RS_ARGS \
    RS_LCORES WINDOW WARMUP SNAPLEN BUFFER_MB FEEDER_CPU CLIENT_CPU NICE PERF >"$OUT/config.env"
for rep in $(seq 1 "$REPS"); do
    for c in $CLIENTS; do
        run_one "$c" "$rep"
    done
done
# A closing reference, so that every client run sits between two reference runs.
if [[ " $CLIENTS " == *" testpmd "* && $REPS -gt 0 ]]; then
    run_one testpmd $((REPS + 1))
fi
if [[ $PERF == 1 ]]; then
    if command -v perf >/dev/null; then
        for c in $CLIENTS; do
            [[ $c == rocescope* ]] || continue
            run_one "$c" perf 1
            {
                echo "by thread and object:"
                perf report -i "$OUT/$c-perf/perf.data" --no-children --sort comm,dso --stdio 2>/dev/null \
                    | grep -v '^#' | grep '%' | head -12
                echo "top symbols (librte_net_memif has no symbols: see the line above):"
                perf report -i "$OUT/$c-perf/perf.data" --no-children --sort comm,dso,sym --stdio 2>/dev/null \
                    | grep -v '^#' | grep '%' | grep -v librte_net_memif | head -16
            } >"$OUT/$c-perf/profile.txt" || true
        done
    else
        log "perf not installed; skipping profiles"
    fi
fi
write_report
if [[ $UPDATE_DOC == 1 ]]; then
    update_doc
fi

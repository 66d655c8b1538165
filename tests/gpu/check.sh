#!/usr/bin/env bash
# tests/gpu/check.sh - the one command for a machine with a GPU:
#   1. build (make all build/check_gpu build/bench_gpu, CUDA on), or check
#      the prebuilt kit (below),
#   2. make test-gpu (the CUDA backend against the CPU reference),
#   3. compute-sanitizer memcheck on build/check_gpu --quick, then racecheck
#      and synccheck on its small launches (check_gpu --small),
#   4. make bench-gpu,
# each under a time limit, so that the whole finishes in under 8 minutes,
# then a summary. Exit status 0 only when the build, test-gpu and the three
# sanitizers passed (they may be skipped: no compute-sanitizer, or no device); a
# benchmark target missed is reported, not a failure. When nvidia-smi -L
# lists a GPU, the GPU checks skipped for want of a device are a failure:
# the machine has one, and nothing ran on it.
#
# Usage: tests/gpu/check.sh [make variables...]   (e.g. CUDA=0 to try it
# without the CUDA backend). Logs go to build/gpu-check/. The limits can be
# changed with T_BUILD, T_TEST, T_MEMCHECK, T_RACE and T_BENCH (seconds).
#
# With build/gpu-kit/ present (make gpu-kit, run where the Debian packages
# are, then carried to the GPU machine) and no make variables given, step 1
# only checks that the kit was built from this tree's sources and runs
# there, and steps 2 to 4 run its programs: no compiler or package is needed
# on the GPU machine. NO_KIT=1 builds with make instead.
set -u

cd "$(dirname "$0")/../.." || exit 2
LOG=build/gpu-check
mkdir -p "$LOG" || exit 2
rm -f "$LOG"/*.log # a step that does not run leaves no old log to be read as its own
MAKEVARS=("$@")
T_BUILD=${T_BUILD:-140}
T_TEST=${T_TEST:-90}
T_MEMCHECK=${T_MEMCHECK:-80}
T_RACE=${T_RACE:-60}
T_BENCH=${T_BENCH:-40}
JOBS=$(nproc 2>/dev/null || echo 4)
START=$(date +%s)

declare -A STATUS SECS NOTE
STEPS=(build test-gpu memcheck racecheck synccheck bench-gpu)
SANITIZERS=(memcheck racecheck synccheck)

say() { printf 'gpu-check: %s\n' "$*"; }

# run NAME LIMIT COMMAND... : runs the command with its output in
# $LOG/NAME.log (and on the terminal), under timeout; sets SECS and RC.
run() {
    local name=$1 limit=$2
    shift 2
    say "== $name (limit ${limit} s): $*"
    local t0
    t0=$(date +%s)
    timeout --kill-after=10 "$limit" "$@" >"$LOG/$name.log" 2>&1
    RC=$?
    SECS[$name]=$(($(date +%s) - t0))
    sed 's/^/    /' "$LOG/$name.log" | tail -n 40
    if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
        NOTE[$name]="timed out after ${limit} s"
    fi
}

skip() {
    STATUS[$1]=SKIP
    SECS[$1]=0
    NOTE[$1]=$2
    say "== $1: SKIP ($2)"
}

say "logitlab GPU check in $(pwd), $(date -u '+%Y-%m-%d %H:%M UTC')"
LISTED="" # the first GPU nvidia-smi -L lists, if any
if command -v nvidia-smi >/dev/null 2>&1; then
    say "GPU: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
    LISTED=$(nvidia-smi -L 2>/dev/null | grep -m1 '^GPU ' || true)
else
    say "GPU: no nvidia-smi on this machine"
fi

# 1. Build, or check the prebuilt kit.
KIT=build/gpu-kit
USE_KIT=0
if [ -x "$KIT/check_gpu" ] && [ "${NO_KIT:-0}" != 1 ] && [ ${#MAKEVARS[@]} -eq 0 ]; then
    USE_KIT=1
fi
if [ "$USE_KIT" = 1 ]; then
    say "== build: the prebuilt kit in $KIT/ ($(head -n 1 "$KIT/BUILD" 2>/dev/null))"
    SECS[build]=0
    {
        echo "kit: $(head -n 1 "$KIT/BUILD" 2>/dev/null)"
        echo "kit sources:  $(cat "$KIT/SOURCES" 2>/dev/null)"
        echo "tree sources: $(tests/gpu/kit-sources.sh 2>&1)"
        ldd "$KIT"/check_gpu "$KIT"/bench_gpu 2>&1
    } >"$LOG/build.log"
    sed 's/^/    /' "$LOG/build.log"
    if [ "$(cat "$KIT/SOURCES" 2>/dev/null)" != "$(tests/gpu/kit-sources.sh 2>/dev/null)" ]; then
        STATUS[build]=FAIL
        NOTE[build]="the kit was built from other sources than this tree's: make gpu-kit again, or NO_KIT=1 to build here"
    elif grep -q 'not found' "$LOG/build.log"; then
        STATUS[build]=FAIL
        NOTE[build]="the kit needs libraries this machine lacks (see the log)"
    else
        STATUS[build]=PASS
        NOTE[build]="prebuilt kit, built from these sources"
    fi
    CUDA_LINE=$(sed -n 2p "$KIT/BUILD" 2>/dev/null || true)
    CHECK_BIN=$KIT/check_gpu
    # make test-gpu's commands on the kit's programs: the checks of gpu/, then check_gpu.
    TEST_CMD=(bash -c 'for b in "$1"/*; do
        case ${b##*/} in check_gpu | bench_gpu | BUILD | SOURCES) continue ;; esac
        [ -x "$b" ] && { "$b" || exit 1; }
    done
    exec "$1"/check_gpu' _ "$KIT")
    BENCH_CMD=("$KIT/bench_gpu")
else
    # The Makefile builds the CUDA backend where it sees a GPU's device
    # nodes; where nvidia-smi lists one, ask for it outright (a CUDA= given wins).
    if [ -n "$LISTED" ] && ! printf '%s\n' ${MAKEVARS[@]+"${MAKEVARS[@]}"} | grep -q '^CUDA='; then
        MAKEVARS+=(CUDA=1)
    fi
    run build "$T_BUILD" make -j"$JOBS" ${MAKEVARS[@]+"${MAKEVARS[@]}"} all build/check_gpu build/bench_gpu
    if [ "$RC" -eq 0 ]; then STATUS[build]=PASS; else STATUS[build]=FAIL; fi
    CUDA_LINE=$(grep -m1 '^logitlab: ' "$LOG/build.log" || true)
    CHECK_BIN=build/check_gpu
    TEST_CMD=(make ${MAKEVARS[@]+"${MAKEVARS[@]}"} test-gpu)
    BENCH_CMD=(make ${MAKEVARS[@]+"${MAKEVARS[@]}"} bench-gpu)
fi

# 2. make test-gpu.
DEVICE_WHY=""
if [ "${STATUS[build]}" = PASS ]; then
    run test-gpu "$T_TEST" "${TEST_CMD[@]}"
    if [ "$RC" -ne 0 ]; then
        STATUS[test-gpu]=FAIL
    elif grep -q '^check_gpu: skipped: ' "$LOG/test-gpu.log"; then
        DEVICE_WHY=$(sed -n 's/^check_gpu: skipped: //p' "$LOG/test-gpu.log" | head -n 1)
        STATUS[test-gpu]=SKIP
        NOTE[test-gpu]=$DEVICE_WHY
    else
        STATUS[test-gpu]=PASS
    fi
else
    skip test-gpu "the build failed"
    STATUS[test-gpu]=FAIL
fi

# 3. compute-sanitizer: memcheck, racecheck, synccheck.
SANITIZER=""
for c in "$(command -v compute-sanitizer 2>/dev/null)" /usr/local/cuda/bin/compute-sanitizer \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda/compute-sanitizer; do
    if [ -n "$c" ] && [ -f "$c" ] && [ -x "$c" ]; then
        SANITIZER=$c
        break
    fi
done
for tool in "${SANITIZERS[@]}"; do
    if [ "${STATUS[build]}" != PASS ]; then
        skip "$tool" "the build failed"
        STATUS[$tool]=FAIL
    elif [ -n "$DEVICE_WHY" ]; then
        skip "$tool" "$DEVICE_WHY"
    elif [ -z "$SANITIZER" ]; then
        skip "$tool" "compute-sanitizer not found (PATH, /usr/local/cuda/bin, /usr/local/cuda/compute-sanitizer)"
    else
        # memcheck on the quick check; racecheck and synccheck, far slower
        # per thread, on the small launches only.
        if [ "$tool" = memcheck ]; then
            run "$tool" "$T_MEMCHECK" "$SANITIZER" --tool "$tool" --error-exitcode 1 "$CHECK_BIN" --quick
        else
            run "$tool" "$T_RACE" "$SANITIZER" --tool "$tool" --error-exitcode 1 "$CHECK_BIN" --small
        fi
        if [ "$RC" -eq 0 ]; then STATUS[$tool]=PASS; else STATUS[$tool]=FAIL; fi
    fi
done

# 4. make bench-gpu.
if [ "${STATUS[build]}" = PASS ]; then
    run bench-gpu "$T_BENCH" "${BENCH_CMD[@]}"
    if [ "$RC" -ne 0 ]; then
        STATUS[bench-gpu]=FAIL
    elif grep -q '^bench-gpu: skipped: ' "$LOG/bench-gpu.log"; then
        STATUS[bench-gpu]=SKIP
        NOTE[bench-gpu]="$(sed -n 's/^bench-gpu: skipped: //p' "$LOG/bench-gpu.log" | head -n 1); CPU table only"
    else
        STATUS[bench-gpu]=PASS
    fi
else
    skip bench-gpu "the build failed"
fi

# Summary.
TOTAL=$(($(date +%s) - START))
echo
say "================ summary ================"
[ -n "$CUDA_LINE" ] && say "$CUDA_LINE"
printf '%-10s %-6s %8s  %s\n' step status seconds "log / note"
for s in "${STEPS[@]}"; do
    log="$LOG/$s.log"
    [ -f "$log" ] || log="-"
    printf '%-10s %-6s %8s  %s%s\n' "$s" "${STATUS[$s]}" "${SECS[$s]:-0}" "$log" \
        "${NOTE[$s]:+ (${NOTE[$s]})}"
done
echo
if [ -f "$LOG/test-gpu.log" ]; then
    grep -E '^(check_gpu: (lm head|skipped|FAIL)|philox_check: )' "$LOG/test-gpu.log" | head -n 14
fi
for tool in "${SANITIZERS[@]}"; do
    if [ "${STATUS[$tool]}" != SKIP ] && [ -f "$LOG/$tool.log" ]; then
        grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^check_gpu: lm head' "$LOG/$tool.log" | sed "s/^/$tool: /"
    fi
done
if [ -f "$LOG/bench-gpu.log" ]; then
    echo
    grep -v -E '^(make|  LD|  CC|  NVCC)' "$LOG/bench-gpu.log"
fi
echo
OK=1
[ "${STATUS[build]}" = PASS ] || OK=0
[ "${STATUS[test-gpu]}" = FAIL ] && OK=0
for tool in "${SANITIZERS[@]}"; do
    [ "${STATUS[$tool]}" = FAIL ] && OK=0
done
if [ -n "$DEVICE_WHY" ]; then
    say "no GPU checks ran: $DEVICE_WHY"
    if [ -n "$LISTED" ]; then
        say "but nvidia-smi -L lists a GPU ($LISTED): the checks that skipped count as failed"
        OK=0
    fi
fi
say "logs: $(for s in "${STEPS[@]}"; do [ -f "$LOG/$s.log" ] && printf '%s ' "$LOG/$s.log"; done)"
if [ "$OK" = 1 ]; then
    say "overall: PASS in ${TOTAL} s"
    exit 0
fi
say "overall: FAIL in ${TOTAL} s"
exit 1

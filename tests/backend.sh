#!/bin/sh
# The backends from the command line: --backend auto, cpu and cuda, the
# reason auto gives when it falls back to the CPU, and the batch view.
# Run on both builds (the sanitizer build never has CUDA; the plain one has
# it when nvcc was found) and on machines with and without a CUDA device.
# Usage: tests/backend.sh BINARY
set -u
BIN=${1:?usage: tests/backend.sh BINARY}
HERE=$(dirname "$0")
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
SMALL="--hidden-size 512"

"$BIN" --backend gpu show toy >"$TMP/out" 2>"$TMP/err"
if [ $? -eq 2 ] && [ "$(cat "$TMP/err")" = "logitlab: --backend: 'gpu' is not a backend (auto, cpu or cuda)" ]; then
    ok
else
    bad "--backend gpu: $(cat "$TMP/err")"
fi

# The batch view's status line: the backend, and on the line below why auto
# chose the CPU when it did.
# shellcheck disable=SC2086 # $SMALL is two words
"$BIN" --headless --size 132x43 $SMALL --keys 'B<Space>' real-loop >"$TMP/batch" 2>"$TMP/err" ||
    bad "the batch view failed: $(cat "$TMP/err")"
grep -q 'Batch of 8: one LM head call, one sampler call' "$TMP/batch" && ok || bad "no batch pane"
grep -q '^.A greedy' "$TMP/batch" && ok || bad "no greedy request in the batch"
# A full-size lesson: the device opens at its first use, which a toy lesson never makes.
# shellcheck disable=SC2086
if "$BIN" --backend cuda show real-france $SMALL --top 1 >"$TMP/out" 2>"$TMP/err"; then
    # A usable device: auto takes it.
    grep -q ' CUDA  kernel ' "$TMP/batch" && ok || bad "auto did not take the CUDA device"
    echo "backend: a CUDA device is usable here"
else
    status=$?
    why=$(sed -n 's/^logitlab: --backend cuda: //p' "$TMP/err")
    if [ "$status" -eq 2 ] && [ -n "$why" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ]; then
        ok
    else
        bad "--backend cuda without a device: status $status, '$(cat "$TMP/err")'"
    fi
    case $why in
    "no CUDA device: "* | "no CUDA backend: built without nvcc" | "no CUDA backend: nvcc found but not its runtime (libcudart_static.a)" | \
        "no CUDA backend: built on a machine without an NVIDIA GPU (make CUDA=1 builds it)" | "no CUDA backend in the sanitizer build") ok ;;
    *) bad "--backend cuda: unexpected reason '$why'" ;;
    esac
    grep -q ' CPU  kernel ' "$TMP/batch" && ok || bad "auto did not fall back to the CPU"
    grep -qF " $why" "$TMP/batch" && ok || bad "the status line does not say why: '$why'"
    echo "backend: no CUDA here ($why)"
fi

# cpu and auto give the same numbers (the same sampler, or a GPU that agrees
# with it: the exact comparison is tests/gpu/check_gpu.c's).
# shellcheck disable=SC2086
"$BIN" --backend cpu show real-france $SMALL --top 5 >"$TMP/cpu" 2>"$TMP/err" || bad "--backend cpu: $(cat "$TMP/err")"
# shellcheck disable=SC2086
"$BIN" show real-france $SMALL --top 5 >"$TMP/auto" 2>&1 || bad "--backend auto failed"
grep -q 'Paris' "$TMP/cpu" && ok || bad "--backend cpu: no Paris"
if cmp -s "$TMP/cpu" "$TMP/auto"; then
    ok
elif grep -q ' CUDA  kernel ' "$TMP/batch"; then
    # The GPU's LM head may move the last digits; the tokens, their order and
    # the draw must stay (the tolerances are check_gpu's).
    # shellcheck disable=SC2086
    "$BIN" --backend cpu show real-france $SMALL --top 5 --format json >"$TMP/cpu.json" 2>&1
    # shellcheck disable=SC2086
    "$BIN" show real-france $SMALL --top 5 --format json >"$TMP/auto.json" 2>&1
    if [ "$(grep -o '"id": [0-9]*' "$TMP/cpu.json")" = "$(grep -o '"id": [0-9]*' "$TMP/auto.json")" ] &&
        grep -q '"id": ' "$TMP/cpu.json"; then
        echo "backend: cpu and cuda tables differ in the last digits only (see check_gpu):"
        diff "$TMP/cpu" "$TMP/auto" | head -6
        ok
    else
        bad "--backend cpu and cuda rank or draw different tokens"
    fi
else
    bad "--backend cpu and auto differ on the CPU"
fi

# A toy lesson batches its own logits on the CPU, with no LM head to run.
"$BIN" --headless --size 80x24 --keys 'B' toy >"$TMP/out" 2>&1
grep -q 'Batch of 4' "$TMP/out" && ok || bad "B on a toy lesson: $(tail -1 "$TMP/out")"

printf 'backend: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

#!/bin/sh
# The engine lesson's batch in a real terminal (issue 13 part 6): a private
# tmux server runs a shell, the test types into it and reads the pane back
# (as tests/tmux.sh does), waiting with deadlines, never for a fixed time.
# The lesson opens on four requests on the toy step 1 logits; Down selects
# request B, t lowers its temperature 0.8 -> 0.7, and only B's two lines
# change: its final probability of "on" goes from 0.5319 to 0.5833 (the
# reference at T 0.7, worked out in tests/check_toybatch.c) while the lines
# of A, C and D stay byte for byte. Then Space stays at the one step, B leaves.
# Usage: tests/batch_toy_tmux.sh BINARY
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=batch-toy-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

# The batch pane's lines (the left 80 columns at 120x40) of request $1,
# its head and its tokens, with the selection mark left out.
rows_of() {
    screen | cut -c1-80 | grep -A1 "^[ >]$1 " | sed 's/^>/ /'
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 120 -y 40 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

keys "$BIN engine" Enter
check "the engine lesson opens on its batch" "Batch of 4: one sampler call, each row its own settings"
check "request B, drawn with seed 1" "cat p 0.1727, 5 kept"
check "request C's tokens" "on 0.4583  cat 0.1863  mat 0.1380"
keys Down
check "Down selects B" ">B T 0.8 top-p 0.95 seed 1"
for r in A C D; do rows_of $r >"$TMP/before-$r"; done
rows_of B >"$TMP/before-B"
keys t
check "t changes request B" "request B: temperature 0.7 (the other requests keep theirs)"
check "B's row at T 0.7" ">B T 0.7 top-p 0.95 seed 1"
check "B's new probabilities" "on 0.5833  cat 0.1613"
for r in A C D; do
    rows_of $r >"$TMP/after-$r"
    if [ -s "$TMP/before-$r" ] && cmp -s "$TMP/before-$r" "$TMP/after-$r"; then ok; else
        bad "request $r changed: $(cat "$TMP/before-$r") / $(cat "$TMP/after-$r")"
    fi
done
rows_of B >"$TMP/after-B"
if cmp -s "$TMP/before-B" "$TMP/after-B"; then bad "request B did not change"; else ok; fi
keys Space
check "Space stays at the toy's one step, and says why" "a toy lesson has one row of logits per step, not one per text"
check "no request stepped" "batch of 4: step 0, 4 running"
keys B
check "B leaves the batch" "back to the single step"
# the title bar counts the lessons
check "the single step of request A" "step 1/4  lesson 10/$(ls "$HERE"/../lessons/*.ini | wc -l)"
keys q
wait_prompt || bad "no prompt after the engine lesson"

if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'batch toy tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

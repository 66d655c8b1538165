#!/bin/sh
# Many draws on the toy lesson in a real terminal: a private tmux server runs
# a shell, the test types into it and reads the pane back (as tests/tmux.sh
# does). D counts 100 draws in the cumulative pane's room, D again 1,000,
# then 10,000, then hides them; '/' marks the found token's row. It waits
# for screen content with a deadline, never for a fixed time.
# Usage: tests/draws_tmux.sh BINARY
#
# The numbers: lessons/02-toy.ini at temperature 1 (seed 002's table: "on"
# 0.4407, so N x final is 44.1, 440.7, 4406.7), seed 1; the counts of "on"
# among the first 100, 1,000 and 10,000 draws u_i = sampler_u(1, 1, 0, i)
# are 36, 411 and 4374, which tests/check_drawstoy.c works out by hand
# (sampler_draw on each u_i) and checks against the app's.
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=draws-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

lacks() { # lacks DESCRIPTION TEXT: TEXT is not on screen now
    if screen | grep -qF -- "$2"; then bad "$1: '$2' is on screen"; else ok; fi
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 80 -y 24 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

keys "$BIN toy --temperature 1" Enter
check "toy opens at temperature 1" "kept 7/7, mass 1.0000"
check "the staircase is there" "Cumulative"

# 1. D: 100 draws, their counts beside N x final, in the staircase's room.
keys D
check "D counts 100 draws" "Draws 100"
check "on's count and N x final" "on          36    44.1"
check "D says what it did" "100 draws with the step's seed, counted against the probabilities (D: 1,000)"
lacks "the draws take the staircase's room" "Cumulative"
# 2. D again: 1,000, then 10,000: the counts close in on N x final.
keys D
check "D again counts 1,000" "Draws 1,000"
check "on's count of 1,000" "on         411   440.7"
keys D
check "then 10,000" "Draws 10,000"
check "on's count of 10,000" "on        4374  4406.7"
check "the verdict on the counts" "22.7"
# 3. '/' marks the found token's row in every pane (two on row "on").
keys / o n Enter
check "the token is found" "found on (id 5): its row is marked in every pane"
if [ "$(screen | grep -c '▸on')" -ge 2 ]; then ok; else bad "the row of on is not marked"; fi
# 4. D once more hides the draws: the staircase is back.
keys D
check "D hides the draws" "the draws are hidden (D draws again)"
check "the staircase is back" "Cumulative"
keys q
wait_prompt || bad "no prompt after toy"

# 5. The sanitizers found nothing.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'draws tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

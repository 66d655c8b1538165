#!/bin/sh
# Big mode in a real terminal (issue 13): a private tmux server runs a shell,
# the test types into it and reads the pane back (as tests/tmux.sh does).
# b shows the logits and exponentials at the whole height, b again the
# probabilities and the cumulative sums, b once more the four panes;
# --big opens in it. Each pane then has 23 rows for the toy's 7 tokens, so
# a token's bar is drawn on 3 rows. It waits for screen content with a
# deadline, never for a fixed time.
# Usage: tests/big_tmux.sh BINARY
#
# The numbers: lessons/02-toy.ini (seed 002's table: e^2.1 = 8.1662 for
# "on", its probability 0.4407 at temperature 1).
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=big-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

lacks() { # lacks DESCRIPTION TEXT: TEXT is not on screen now
    if screen | grep -qF -- "$2"; then bad "$1: '$2' is on screen"; else ok; fi
}

# rows TEXT: how many rows of the screen hold TEXT
rows() { screen | grep -cF -- "$1"; }

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 100 -y 30 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

keys "$BIN toy --temperature 1" Enter
check "toy opens with its four panes" "Cumulative"
check "the probabilities pane too" "Probabilities p"

# 1. b: the scores at the whole height.
keys b
check "b shows the logits" "Logits z"
check "and the exponentials" "8.1662"
lacks "the probabilities wait" "Probabilities p"
lacks "the staircase waits" "Cumulative"
# 2. b again: the probabilities and the staircase.
keys b
check "b again shows the probabilities" "Probabilities p"
check "and the staircase" "Cumulative"
check "on's probability" "0.4407"
lacks "the logits wait" "Logits z"
# 3. b once more: the four panes.
keys b
check "b once more: the logits" "Logits z"
check "with the staircase" "Cumulative"
keys q
wait_prompt || bad "no prompt after toy"

# 4. --big opens in big mode: the scores at the whole height.
keys "$BIN toy --big" Enter
check "--big opens on the logits" "Logits z"
lacks "--big leaves the staircase for b" "Cumulative"
keys q
wait_prompt || bad "no prompt after --big"

# 5. The sanitizers found nothing.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'big tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

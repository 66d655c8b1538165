#!/bin/sh
# An exercise answered in a real terminal: a private tmux server runs a
# shell, the test types into it and reads the pane back (as tests/tmux.sh
# does). A wrong value is marked and asked again, the right one is then
# accepted; a kept set is typed as tokens and checked as a set. It waits for
# screen content with a deadline, never for a fixed time.
# Usage: tests/exercise_tmux.sh BINARY
#
# The numbers: lessons/11-exercise-1.ini, e^2 = 7.3891 (7.4 is 0.0109 too
# high); lessons/12-exercise-2.ini, top-k = 3 keeps A, B and C.
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=exercise-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

lacks() { # lacks DESCRIPTION TEXT: TEXT is not on screen now
    if screen | grep -qF -- "$2"; then bad "$1: '$2' is on screen"; else ok; fi
}

start() { # start ARGS...: run the program in the shell
    keys "$BIN $*" Enter
    wait_for "logitlab  " || bad "the program did not start: $*"
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 80 -y 24 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

# 1. A wrong value: marked, the solution still hidden, asked again.
start exercise-1
check "exercise-1 opens" "Exercise: a answers, v shows the solution."
keys a
check "a asks the first value" "answer 1 of 7: exp #0 = ?"
keys 7.4 Enter
check "the wrong value is marked" "you 7.4000 wrong: about 0.01 too high; try again"
check "the retry prompt" "exp #0 = 7.4000: about 0.01 too high; try again"
lacks "no solution after one miss" "Solution:"
# 2. The right value on the second try is accepted; the next one is asked.
keys 7.3891 Enter
check "the right value is accepted" "you 7.3891 right, 2nd try"
check "the next value is asked" "answer 2 of 7: exp #1 = ?"
lacks "still no solution" "Solution:"
# 3. v typed as the answer shows the solution.
keys v Enter
check "v shows the solution" "Solution: e^2 = 7.3891"
keys q
wait_prompt || bad "no prompt after exercise-1"
keys clear Enter
wait_prompt || bad "no prompt after clear"

# 4. The kept set, beside the panes: a token missing, then the set in
# another order with an id.
$T resize-window -t t -x 132 -y 43
start exercise-2
check "exercise-2 opens" "Part 1, top-k = 3"
keys a
check "a asks the kept set" "answer 1 of 5: kept = ?"
keys "A B" Enter
check "the missing token is named" "kept = A B: missing C; try again"
keys "2, b A" Enter
check "the set is accepted" "you A B C right, 2nd try"
check "the next value is asked" "answer 2 of 5: kept-mass = ?"
keys Escape q # Esc leaves the answer prompt (q there would be typed)
wait_prompt || bad "no prompt after exercise-2"

# 5. The sanitizers found nothing.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'exercise tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

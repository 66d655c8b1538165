#!/bin/sh
# The text view (c, issue 31) in a real terminal at the classroom sizes,
# 80x24, 120x40 and 200x60: on the toy, a trained-model lesson and a
# full-size one, the text is shown, another token is taken mid-text and
# the rest drawn again, and [ brings the first text back. A model file's
# run is tests/model.sh's. It waits for screen content, never for a time.
# Usage: tests/read_tmux.sh BINARY
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=read-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"

# A session that keeps the server up while the lessons' sessions come and
# go (a server killed and started again can miss its first command).
$T new-session -d -s keep -x 80 -y 24 "sh"

# lesson SIZE WHAT STEPS LEFTS: open WHAT, take STEPS steps, open the text
# view, go LEFTS tokens back, take the next most likely token there, then
# the first text again.
lesson() {
    size=$1 what=$2 steps=$3 lefts=$4
    $T new-session -d -s t -x "${size%x*}" -y "${size#*x}" "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
    wait_prompt || bad "$size: no shell prompt"
    keys "$BIN $what; echo rc=\$?" Enter
    check "$size $what opens" "step 1/"
    i=0
    while [ "$i" -lt "$steps" ]; do keys Space; i=$((i + 1)); done
    keys c
    check "$size $what: c shows the text" "text 1 of 1"
    i=0
    while [ "$i" -lt "$lefts" ]; do keys Left; i=$((i + 1)); done
    keys Down Enter
    check "$size $what: Enter takes another token there" "text 2 of 2"
    keys "["
    check "$size $what: [ brings the first text back" "text 1 of 2"
    keys c q
    check "$size $what: q quits" "rc=0"
    $T kill-session -t t 2>/dev/null
}

for size in 80x24 120x40 200x60; do
    lesson "$size" toy 2 1
    lesson "$size" trained-next 3 2
    lesson "$size" "real-story --hidden-size 512 --max-tokens 8" 8 3
done

if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi
printf 'read tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

#!/bin/sh
# The legend in a real terminal (issue 13, part 3): a private tmux server runs
# a shell, the test types into it and reads the pane back (as tests/tmux.sh
# does). L shows the legend of the marks, any key closes it; ? shows the
# keys and ? again (or Space) their second page, the legend; b toggles big
# mode and says so. It waits for screen content with a deadline, never for
# a fixed time.
# Usage: tests/legend_tmux.sh BINARY
#
# The marks and their lines are src/tui/marks.def's; the glyphs checked
# here are those the toy panes draw at temperature 1 with min-p 0.1 and u
# shown (the threshold U+2503 beside the bars of [PAD] and dog, the u
# U+25C6 on the drawn token's step).
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=legend-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

lacks() { # lacks DESCRIPTION TEXT: TEXT is not on screen now
    if screen | grep -qF -- "$2"; then bad "$1: '$2' is on screen"; else ok; fi
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 120 -y 40 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

keys "$BIN toy --temperature 1 --min-p 0.1" Enter
check "toy opens with min-p" "min-p 0.0441 kept 5/7"
keys u
check "u is shown" "u 0.6720"
# 1. The marks on screen: a threshold beside the bars, the u on a step.
if screen | grep -q '×min-p *┃'; then ok; else bad "no threshold beside a removed token's bar"; fi
if screen | grep -q '◆'; then ok; else bad "no u marker"; fi
if screen | grep -q '█┃█'; then bad "a threshold splits a bar"; else ok; fi
# 2. L: the legend, with the same glyphs and what they mean.
keys L
check "L shows the legend" "Marks and colours"
check "the threshold's line" "┃                  a filter's cut"
check "the u's line" "◆                  the seeded u on the cumulative"
check "the ghost's line" "a ghost: the value before the filters"
lacks "the legend covers the panes" "Probabilities p  min-p"
# 3. Any key closes it, and does nothing else (x would reset the settings).
keys x
check "any key closes the legend" "min-p 0.0441 kept 5/7"
lacks "the legend is gone" "Marks and colours"
# 4. ? shows the keys; ? again their second page, the legend; Space too.
keys '?'
check "? shows the keys" "? again or L: the legend of the marks and colours"
check "big mode's key is listed" "big mode: scores, then probabilities"
keys '?'
check "? again shows the legend" "Marks and colours"
keys '?'
check "? on the legend goes back to the keys" "Keys (? or Space: the legend"
keys Space
check "Space on the keys shows the legend" "Marks and colours"
keys Escape
check "Esc closes it" "min-p 0.0441 kept 5/7"
# 5. b goes through big mode's two pairs of panes, then turns it off.
keys b
check "b turns big mode on" "big mode: the logits and the exponentials (b: the probabilities)"
keys b
check "b again: the probabilities" "big mode: the probabilities and the cumulative sums"
keys b
check "b once more turns it off" "big mode off: all four panes"
keys q
wait_prompt || bad "no prompt after toy"

# 6. The sanitizers found nothing.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'legend tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

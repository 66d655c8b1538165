#!/bin/sh
# Golden screens: the interactive view of every lesson, drawn headless at
# 80x24, 100x30, 120x40 and 200x60, and a few scenes after keys, compared with the files in
# tests/golden/screens/. The recompute time on the status line varies from run
# to run (and with it the width of the line's end), so it is masked, as are a model's times in its pane. GOLDEN_UPDATE=1 rewrites the files (review the diff).
# Usage: tests/screens.sh BINARY
set -u
BIN=${1:?usage: tests/screens.sh BINARY}
DIR="$(dirname "$0")/golden/screens"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# A user's own config.ini must not change what the tests see.
export XDG_CONFIG_HOME="$TMP/config"
export LC_ALL=C.UTF-8
pass=0
fail=0

# scene NAME SIZE KEYS LESSON [OPTIONS...]
scene() {
    name=$1 size=$2 keys=$3 lesson=$4
    shift 4
    if ! "$BIN" --headless --size "$size" --keys "$keys" "$lesson" "$@" >"$TMP/raw" 2>"$TMP/err"; then
        fail=$((fail + 1))
        printf 'FAIL: %s: %s\n' "$name" "$(cat "$TMP/err")"
        return
    fi
    # A model's times in its pane (the lines of view_lesson.c's speed_lines)
    # as well.
    sed -E -e 's/ +CPU [0-9.]+ (µs|us|ms|s) *$/  CPU N/' \
        -e '/(Prompt eval|Eval|This step): ([0-9]|cached)|tokens\/s\)/s/[0-9][0-9.]* (ms|s|tokens\/s)/N \1/g' \
        "$TMP/raw" >"$TMP/out"
    if [ "${GOLDEN_UPDATE:-0}" = 1 ]; then
        cp "$TMP/out" "$DIR/$name.txt"
        pass=$((pass + 1))
    elif cmp -s "$TMP/out" "$DIR/$name.txt"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        printf 'FAIL: %s differs from %s:\n' "$name" "$DIR/$name.txt"
        diff -u "$DIR/$name.txt" "$TMP/out" | head -30
    fi
}

# Full-size lessons at hidden size 512: the same screens, a smaller head.
SMALL="--hidden-size 512"
for id in $("$BIN" lessons | awk '{print $1}'); do
    case $id in real-*) opts=$SMALL ;; *) opts= ;; esac
    # The sizes a classroom gives: a small terminal, a projector's, the
    # size README recommends, a large screen.
    for size in 80x24 100x30 120x40 200x60; do
        # shellcheck disable=SC2086 # $opts is two words or none
        scene "$id-$size" $size "" "$id" $opts
    done
done

scene toy-t05 80x24 ":temperature 0.5<Enter>" toy
scene toy-topk3 80x24 ":temperature 1<Enter>:top-k 3<Enter>u" toy
scene toy-steps 132x43 ":temperature 1<Enter>:seed 3<Enter><Space><Space>" toy
scene toy-back 80x24 "<Space><Space><Left>" toy
scene help 80x24 "?" toy
scene big-scores 100x30 "" toy --big
scene big-probabilities 120x40 ":temperature 1<Enter>:top-p 0.9<Enter>bu" toy --big
scene prompt 80x24 ":top-p 0.9" toy
scene small 60x20 "" toy
scene resized 80x24 "<resize 132x43>" top-p
scene stop 80x24 ":max-tokens 2<Enter><Space><Space>" stopping
scene exercise-hidden 80x24 "a7.4<Enter>" exercise-1
scene exercise-solved 132x43 "a7.3891<Enter>2.7183<Enter>1<Enter>11.1073<Enter>0.6652<Enter>0.2447<Enter>0.09<Enter>" exercise-1
scene ascii 80x24 ":top-p 0.9<Enter>u" toy --ascii
scene penalty-engine 132x43 "f" penalty --step 3
# shellcheck disable=SC2086
{
    scene real-draws-find 132x43 "D/Paris<Enter>" real-france $SMALL
    scene real-loop-steps 100x30 "<Space><Space><Space><Space><Space><Space><Space><Space><Space>" real-loop $SMALL
    scene real-loop-escape 100x30 ":repetition-penalty 1.3<Enter><Space><Space><Space><Space><Space><Space><Space><Space><Space>" real-loop $SMALL
    scene real-story-filters 80x24 ":top-p 0.95<Enter>:min-p 0.05<Enter>D" real-story $SMALL
}
# The text view (c, issue 31) at the classroom sizes: another token taken
# mid-text and the rest drawn again, then (120x40) the first text back.
S8="<Space><Space><Space><Space><Space><Space><Space><Space>"
for size in 80x24 120x40 200x60; do
    scene "read-toy-$size" $size "<Space><Space>c<Left><Down><Enter>" toy
    # shellcheck disable=SC2086
    scene "read-story-$size" $size ":max-tokens 12<Enter>${S8}c<Left><Left><Left><Down><Enter>" real-story $SMALL
    scene "read-trained-$size" $size "<Space><Space><Space><Space>c<Left><Left><Down><Enter>" trained-next
done
scene read-toy-back 120x40 "<Space><Space>c<Left><Down><Enter>[" toy
# shellcheck disable=SC2086
scene read-story-back 120x40 ":max-tokens 12<Enter>${S8}c<Left><Left><Left><Down><Enter>[" real-story $SMALL

printf 'screens: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

#!/bin/sh
# valgrind (memcheck) on `show` of every lesson and on a scripted session of
# the interactive view: headless (app and view) and in a real terminal under
# tmux (ncurses too). Any error or definite/indirect leak fails.
# Usage: tests/valgrind.sh BINARY   (the plain build: ASan and valgrind do not mix)
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
SOCK="logitlab-vg-$$"
T="tmux -L $SOCK -f /dev/null"
trap '$T kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: skipped: valgrind is not installed (make test-valgrind installs it)"
    exit 0
fi
VG="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"

run() { # run NAME ARGS...
    name=$1
    shift
    # shellcheck disable=SC2086
    $VG --log-file="$TMP/$name.vg" "$BIN" "$@" >/dev/null 2>"$TMP/$name.err"
    status=$?
    if [ "$status" -eq 0 ] && [ ! -s "$TMP/$name.vg" ]; then ok; else
        bad "$name (status $status): $(head -c 1500 "$TMP/$name.vg") $(cat "$TMP/$name.err")"
    fi
}

for id in $("$BIN" lessons | awk '{print $1}'); do
    case $id in
    real-*) run "show-$id" show "$id" --hidden-size 512 --draws 1000 --find 13 ;;
    *) run "show-$id" show "$id" --format json ;;
    esac
done
run export export exercise-3
run generate generate real-loop --hidden-size 512 --repetition-penalty 1.3
run headless-toy --headless --size 132x43 --keys \
    ":temperature 0.8<Enter>ttTkkKpPmMrRfgos<Space><Space><Left><Right>u.x?<Esc>l<Down><Esc>:top-k 3<Enter><Home>n" toy
run headless-real --headless --size 100x30 --hidden-size 512 --keys "D/Paris<Enter><Space><Space>pD" real-france

# A session in a real terminal, ncurses included.
$T new-session -d -s t -x 100 -y 30 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME sh"
sleep 0.5
# The echo is split so that the typed line itself never reads "exit=".
$T send-keys -t t "$VG --log-file=$TMP/tui.vg $BIN toy; echo \"ex\"\"it=\$?\"" Enter
if wait_for "Logits z" 60; then
    $T send-keys -t t ":temperature 0.5" Enter
    wait_for "0.7258" 60 || bad "tui: temperature 0.5 not shown"
    $T send-keys -t t "kkpp" Space Space Left "?" x
    $T resize-window -t t -x 132 -y 43
    wait_for "Text: The cat sat" 60 || bad "tui: resize"
    $T send-keys -t t q
    if wait_for "exit=" 60; then
        if $T capture-pane -p -t t | grep -qF "exit=0" && [ ! -s "$TMP/tui.vg" ]; then ok; else
            bad "tui under valgrind: $($T capture-pane -p -t t | grep exit=) $(head -c 1500 "$TMP/tui.vg")"
        fi
    else
        bad "tui: never ended"
    fi
else
    bad "tui: never started under valgrind"
fi
printf 'valgrind: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

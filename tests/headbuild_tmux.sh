#!/bin/sh
# Opening a full-size lesson shows how far the LM head's build got, in a
# real terminal (a private tmux server, as tests/tmux.sh): before the screen
# starts, one line on standard error rewritten in place, ending with the
# time it took; with the screen up (':lesson'), a line over its bottom row
# while the head is built. The head is the lessons' own: 128,256 x 4,096
# bf16 weights, 1.05 GB.
# Usage: tests/headbuild_tmux.sh BINARY   (the sanitizer build also checks for reports)
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=headbuild-tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"
LINE="building the LM head (1.05 GB): "
VIEW="logitlab  " # the view's title bar

# first_of A B [SECONDS]: which of A and B the pane shows first ("a", "b",
# or "" when neither came before the deadline).
first_of() {
    deadline=$(($(date +%s) + ${3:-10}))
    while [ "$(date +%s)" -le "$deadline" ]; do
        s=$(screen)
        case "$s" in
        *"$1"*) echo a && return ;;
        *"$2"*) echo b && return ;;
        esac
        sleep 0.05
    done
    echo
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 100 -y 30 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt 60 || bad "no shell prompt"

# 1. Before the screen: the line shows while the head is built (the
# sanitizer build takes seconds; a fast machine may finish before the pane
# is read, and then only the last line below can be checked).
keys "$BIN real-france" Enter
seen=$(first_of "$LINE" "$VIEW" 300)
if wait_for "$VIEW" 300; then ok; else bad "real-france did not open"; fi
keys q
wait_prompt 60 || bad "no prompt after q"
# 2. After the view, the terminal's own screen is back: one line, the last
# state of the build with the time it took, between the command and the prompt.
final=$(screen | grep -F "logitlab: $LINE" || true)
case "$final" in
"logitlab: ${LINE}100%, in "*" ms" | "logitlab: ${LINE}100%, in "*" s") ok ;;
*) bad "the last progress line is '$final'" ;;
esac
if [ "$(screen | grep -cF "$LINE")" -eq 1 ]; then ok; else bad "more than one progress line"; fi
after=$(screen | grep -v '^$' | grep -A1 -F "$BIN real-france" | tail -n 1)
if [ "$after" = "$final" ]; then ok; else bad "the line after the command is '$after'"; fi
# A build of half a second or more must have been seen as it went.
slow=0
case "$final" in *" s") slow=1 ;; *) ms=${final##*in } && [ "${ms% ms}" -ge 500 ] && slow=1 ;; esac
if [ "$seen" = a ] || [ "$slow" = 0 ]; then ok; else bad "the build took ${final##*in } and showed nothing"; fi
keys clear Enter
wait_prompt 60 || bad "no prompt after clear"

# 3. With the screen up: ':lesson real-france' from toy draws the line over
# the bottom row (after 150 ms of the build), then the lesson's view.
keys "$BIN toy" Enter
if wait_for "Logits z" 60; then ok; else bad "toy did not open"; fi
keys ":lesson real-france" Enter
seen=$(first_of "$LINE" "logitlab  real-france:" 300)
if wait_for "logitlab  real-france:" 300; then ok; else
    bad "real-france did not open from the view"
fi
if [ "$seen" = a ] || [ "$slow" = 0 ]; then ok; else
    bad "the view showed no progress while the head was built"
fi
if screen | grep -qF "$LINE"; then bad "the progress line stayed on the screen"; else ok; fi
keys q
wait_prompt 60 || bad "no prompt after q (from the view)"
keys "echo rc=\$? mark" Enter
if wait_for "rc=0 mark"; then ok; else bad "exit status is not 0"; fi

# 4. The sanitizers found nothing in the whole session.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'headbuild tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

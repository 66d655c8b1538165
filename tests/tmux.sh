#!/bin/sh
# End-to-end tests of the interactive view in a real terminal: a private tmux
# server runs a shell, the tests type into it and read the pane back. They
# wait for screen content (polling capture-pane, with a deadline), never for
# a fixed time, and the server is killed on the way out.
# Usage: tests/tmux.sh BINARY   (the sanitizer build also checks for reports)
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
NAME=tmux
# shellcheck source=tests/tmux_lib.sh
. "$HERE/tmux_lib.sh"

# wait_gone TEXT [SECONDS]: until the pane no longer shows TEXT.
wait_gone() {
    deadline=$(($(date +%s) + ${2:-10}))
    while [ "$(date +%s)" -le "$deadline" ]; do
        if ! screen | grep -qF -- "$1"; then
            return 0
        fi
        sleep 0.05
    done
    return 1
}

# The shell is usable: it echoes typed commands and runs them, and the tty is
# back in canonical mode with echo (what a crashed curses program would leave off).
shell_usable() {
    [ -n "${TMUX_DEBUG:-}" ] && screen # shell_usable WHAT EXPECTED_STATUS
    keys "echo rc=\$? mark-$1; stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | tr '\\n' ' '; echo" Enter
    if wait_for "mark-$1" && wait_for "icanon echo"; then ok; else bad "$1: the shell is not usable"; fi
    if screen | grep -qF "rc=$2 mark-$1"; then ok; else bad "$1: exit status is not $2"; fi
    keys "clear" Enter
    wait_gone "mark-$1" || true
    wait_prompt || bad "$1: no prompt after clear"
}

start() { # start ARGS...: run the program in the shell, its pid in $TMP/pid
    keys "sh -c 'echo \$\$ > $TMP/pid; exec \"\$0\" \"\$@\"' $BIN $*" Enter
    wait_for "logitlab  " || bad "the program did not start: $*"
}

export ASAN_OPTIONS="log_path=$TMP/asan:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$TMP/ubsan:print_stacktrace=1"
$T new-session -d -s t -x 80 -y 24 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS sh"
wait_prompt || bad "no shell prompt"

# 1. Open a lesson; temperature 0.5 puts "on" at 0.7258 (toy step 1).
start toy
check "toy opens" "Logits z"
keys ":temperature 0.5" Enter
check "temperature 0.5" " on      0.7258 "
# 2. Top-k 3: the renormalized probabilities.
keys ":temperature 1" Enter ":top-k 3" Enter
check "top-k 3 (on)" "0.4407 → 0.5856"
check "top-k 3 (cat)" "0.1792 → 0.2381"
check "top-k 3 (mat)" "0.1327 → 0.1764"
# 3. Keys change settings live.
keys T
check "T raises the temperature" "T 1.2 "
keys o
check "o cycles the order" "order hf "
# 4. Help, and any key closes it.
keys "?"
check "help opens" "Keys (? or Space: the legend of the marks; other keys close this)"
keys x
if wait_gone "Keys (? or Space: the legend"; then ok; else bad "help does not close"; fi
# 4b. A command line wider than the screen: its end and the cursor stay on
# screen, after a mark that more is hidden to the left (issue 29, part 3).
# 80 columns less ':', the mark and the cursor: 77, 中文end 7 of them.
keys ":$(printf '%0100d' 0)中文end"
check "a long command line shows its end" ":…$(printf '%070d' 0)中文end"
keys Escape
if wait_gone "中文end"; then ok; else bad "Esc does not close the long command line"; fi
# 5. Resize: the side layout, too small, and back.
$T resize-window -t t -x 132 -y 43
check "resize to 132x43" "│ Text: The cat sat"
$T resize-window -t t -x 60 -y 20
check "too small" "needs a terminal of at least 80x24"
$T resize-window -t t -x 80 -y 24
check "back to 80x24" "Exponentials e^z'"
# 6. Quit: the shell works again.
keys q
wait_prompt || bad "no prompt after q"
shell_usable quit 0

# 7. Steps with a fixed seed give the same tokens on every run.
for run in 1 2; do
    start toy --temperature 1 --seed 11
    keys Space
    wait_for "step 1 drew" || bad "run $run: step 1 not taken"
    keys Space
    wait_for "step 2 drew" || bad "run $run: step 2 not taken"
    screen | grep -F "step 2 drew" >"$TMP/run$run"
    screen | grep -F "Text:" >>"$TMP/run$run"
    keys q
    wait_prompt || bad "no prompt after run $run"
    keys clear Enter
    wait_prompt || bad "no prompt after clear"
done
if [ -s "$TMP/run1" ] && cmp -s "$TMP/run1" "$TMP/run2"; then ok; else
    bad "two runs with seed 11 differ: $(cat "$TMP/run1") / $(cat "$TMP/run2")"
fi

# 7b. The batch view of a full-size lesson: 8 requests, one changed alone,
# a step for all, and back to the single step.
start real-loop --hidden-size 512
check "real-loop opens" "real-loop"
keys B
check "B opens the batch view" "Batch of 8"
keys Down t
check "t changes request B alone" "request B: temperature 0.7 (the other requests keep theirs)"
keys Space
check "Space steps every request" "batch of 8: step 1, "
keys B
check "B leaves the batch view" "back to the single step"
keys q
wait_prompt || bad "no prompt after the batch view"
shell_usable batch 0

# 8. Ctrl-C restores the terminal (exit status 130).
start toy
check "started for Ctrl-C" "Logits z"
keys C-c
wait_prompt || bad "no prompt after Ctrl-C"
shell_usable ctrl-c 130

# 9. SIGTERM restores the terminal (exit status 143).
start top-k
check "started for SIGTERM" "Logits z"
kill -TERM "$(cat "$TMP/pid")"
wait_prompt || bad "no prompt after SIGTERM"
shell_usable sigterm 143

# 9b. SIGHUP (the terminal closed) restores it too (exit status 129).
start toy
check "started for SIGHUP" "Logits z"
kill -HUP "$(cat "$TMP/pid")"
wait_prompt || bad "no prompt after SIGHUP"
shell_usable sighup 129

# 9c. Ctrl-Z suspends: the shell gets the terminal back; fg resumes with the
# screen redrawn, and the program still answers keys.
start toy
check "started for Ctrl-Z" "Logits z"
keys C-z
wait_prompt || bad "no prompt after Ctrl-Z"
if screen | grep -qF "Logits z"; then bad "the screen was not restored on Ctrl-Z"; else ok; fi
keys "fg" Enter
check "fg redraws the screen" "Logits z"
keys ":temperature 0.5" Enter
check "keys work after fg" " on      0.7258 "
keys q
wait_prompt || bad "no prompt after q (after fg)"
shell_usable suspend 0

# 9d. A storm of resizes: the screen ends at the last size, drawn right.
start toy
check "started for the resize storm" "Logits z"
for size in 100x30 60x20 132x43 81x25 200x60 80x24 140x50 90x26 132x43; do
    $T resize-window -t t -x "${size%x*}" -y "${size#*x}"
done
check "after the storm: the side layout" "│ Text: The cat sat"
keys ":temperature 1" Enter ":top-k 3" Enter
check "keys work after the storm" "0.4407 → 0.5856"
keys q
wait_prompt || bad "no prompt after the storm"
$T resize-window -t t -x 80 -y 24
shell_usable storm 0

# 9e. A resize whose signal never reaches curses (SIGWINCH blocked from the
# start here, by perl's sigprocmask, which exec keeps; in life, one that comes
# while the program starts, before curses has its handler): the loop asks the
# terminal its size and draws the new one all the same.
cat >"$TMP/nowinch" <<'EOF'
#!/bin/sh
exec perl -MPOSIX -MConfig -e 'my %n; @n{split " ", $Config{sig_name}} = split " ", $Config{sig_num};
    sigprocmask(SIG_BLOCK, POSIX::SigSet->new($n{WINCH})) or die "sigprocmask: $!";
    exec @ARGV or die "exec: $!"' "$@"
EOF
chmod +x "$TMP/nowinch"
keys "$TMP/nowinch $BIN toy" Enter
check "started with SIGWINCH blocked" "Logits z"
$T resize-window -t t -x 132 -y 43
check "the resize seen without its signal: the side layout" "│ Text: The cat sat"
keys q
wait_prompt || bad "no prompt after the unsignalled resize"
$T resize-window -t t -x 80 -y 24
shell_usable nowinch 0

# 10. A crash (SIGSEGV in the middle of the run) restores the terminal first.
case "$BIN" in
*/san/*) ;; # AddressSanitizer takes over SIGSEGV; the plain build checks this
*)
    start toy
    check "started for the crash" "Logits z"
    kill -SEGV "$(cat "$TMP/pid")"
    check "the crash is reported" "logitlab: crashed"
    shell_usable crash 139
    ;;
esac

# 10b. A model file that shrinks while the view has it mapped (truncate, or
# a smaller file copied over it): the next step reads weights that are gone.
# One line names the file, the terminal is restored, the status is 3.
cp data/stories260K.gguf "$TMP/shrinks.gguf"
start --model "$TMP/shrinks.gguf"
check "started on a model" "model: stories260K"
truncate -s 65536 "$TMP/shrinks.gguf"
keys Space
check "the shrunk file is named" "$TMP/shrinks.gguf: changed or shrank while in use"
shell_usable shrinks 3

# 11. A fatal error before the screen starts leaves the terminal as it was.
keys "$BIN nosuch-lesson" Enter
check "an unknown lesson is reported" "logitlab: no lesson 'nosuch-lesson'"
shell_usable fatal 2

# 12. The sanitizers found nothing in the whole session.
if ls "$TMP"/asan.* "$TMP"/ubsan.* >/dev/null 2>&1; then
    bad "sanitizer reports: $(cat "$TMP"/asan.* "$TMP"/ubsan.* 2>/dev/null | head -20)"
else
    ok
fi

printf 'tmux: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]

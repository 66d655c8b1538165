# cli_hostile_stop.sh - sourced by tests/cli.sh: stop strings cut from the
# shown text as the engines cut them (issue 13, part 9), and stop-text keep.
# The stopping lesson's greedy path is "on", "mat", [EOS] after the prompt
# "The cat sat" (lessons/09-stopping.ini); the toy lesson's is "on", "mat".
# shellcheck shell=sh

# stop_same WANT ARGS...: stdout of logitlab ARGS is exactly WANT, status 0, no stderr.
stop_same() {
    s_want=$1
    shift
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
    if [ "$status" -eq 0 ] && [ ! -s "$TMP/err" ] && [ "$(cat "$TMP/out")" = "$s_want" ]; then
        ok
    else
        bad "logitlab $*: status $status, stdout '$(cat "$TMP/out")', want '$s_want' ($(cat "$TMP/err"))"
    fi
}

# stop_eq WANT FILE WHAT: FILE holds exactly WANT.
stop_eq() {
    if [ "$(cat "$2")" = "$1" ]; then
        ok
    else
        bad "$3: '$(cat "$2")', want '$1'"
    fi
}

# stop_has FILE WHAT PATTERN...: each (basic) regular expression matches a line of FILE.
stop_has() {
    s_file=$1 s_what=$2
    shift 2
    for s_re in "$@"; do
        if ! grep -q -- "$s_re" "$s_file"; then
            bad "$s_what: no line matches '$s_re' in: $(cat "$s_file")"
            return
        fi
    done
    ok
}

# Text: "on mat" spans the two tokens; stripped, the text is the prompt's
# alone, the string named on the closing line; kept, it stays.
stop_same "$(printf 'The cat sat\n[2 tokens; stopped by stop string "on mat", not shown]')" \
    generate stopping --stop 'on mat'
stop_same "$(printf 'The cat sat on mat\n[2 tokens; stopped by stop string "on mat", kept in the text]')" \
    generate stopping --stop 'on mat' --stop-text keep
# "n m" begins inside "on": "o" stays; kept, the text ends after the string
# (what follows it in "mat" goes, as vLLM's include_stop_str_in_output).
stop_same "$(printf 'The cat sat o\n[2 tokens; stopped by stop string "n m", not shown]')" \
    generate stopping --stop 'n m'
stop_same "$(printf 'The cat sat on m\n[2 tokens; stopped by stop string "n m", kept in the text]')" \
    generate stopping --stop 'n m' --stop-text keep
# On the toy lesson, "mat" begins after "on ": the space before it stays, as
# in the engines' text.
stop_same "$(printf 'The cat sat on \n[2 tokens; stopped by stop string "mat", not shown]')" \
    generate toy --stop mat
# A string that never completes holds nothing back at the end.
stop_same "$(printf 'The cat sat on mat\n[3 tokens; stopped by end token [EOS]]')" \
    generate stopping --stop 'mat!'
# -o writes what standard output shows.
expect 0 "" generate stopping --stop 'on mat' -o "$TMP/stop.txt"
stop_eq "$(printf 'The cat sat\n[2 tokens; stopped by stop string "on mat", not shown]')" "$TMP/stop.txt" \
    "generate --stop -o"

# JSON: the text cut, the ids all there, the string and whether it is shown.
jq_stop='[.text, (.generated | tostring), .stop.rule, .stop.string, (.stop.shown | tostring)] | join("|")'
"$BIN" generate stopping --stop 'on mat' --format json | jq -r "$jq_stop" >"$TMP/stop.j"
stop_eq '|[5,6]|stop-string|on mat|false' "$TMP/stop.j" "generate stopping --stop 'on mat' --format json"
"$BIN" generate stopping --stop 'on mat' --stop-text keep --format json | jq -r "$jq_stop" >"$TMP/stop.j"
stop_eq 'on mat|[5,6]|stop-string|on mat|true' "$TMP/stop.j" "generate stopping --stop 'on mat' --stop-text keep --format json"
"$BIN" generate toy --stop mat --format json | jq -r "$jq_stop" >"$TMP/stop.j"
stop_eq 'on |[5,6]|stop-string|mat|false' "$TMP/stop.j" "generate toy --stop mat --format json"
# Without a stop string the object keeps its two fields.
"$BIN" generate stopping --format json | jq -r '.stop | keys | join(",")' >"$TMP/stop.j"
stop_eq 'detail,rule' "$TMP/stop.j" "generate stopping json stop keys"
# The setting is in the report's settings, like every row of sampling.def.
"$BIN" show toy --stop-text keep --format json | jq -r '.settings.stop_text' >"$TMP/stop.j"
stop_eq keep "$TMP/stop.j" "show --stop-text keep json"

# Markdown: the text cut, the string beside it; the closing line as before.
"$BIN" generate stopping --stop 'on mat' --format markdown >"$TMP/stop.md"
stop_has "$TMP/stop.md" "generate stopping --stop 'on mat' --format markdown" \
    '^\*\*Text:\*\* The cat sat \*(stopped by stop string "on mat", not shown)\*$' \
    '^2 tokens; stopped by stop string "on mat"\.$'
"$BIN" generate stopping --stop 'on mat' --stop-text keep --format markdown >"$TMP/stop.md"
stop_has "$TMP/stop.md" "generate --stop-text keep --format markdown" \
    '^\*\*Text:\*\* The cat sat on mat \*(stopped by stop string "on mat", kept in the text)\*$'

# One step (show, export): its stop line says what becomes of the string.
"$BIN" show stopping --step 5 >"$TMP/out"
stop_has "$TMP/out" "show stopping --step 5" '^stop: stop string "on mat", not shown$'
"$BIN" show stopping --step 5 --stop-text keep >"$TMP/out"
stop_has "$TMP/out" "show stopping --step 5 --stop-text keep" \
    '^stop: stop string "on mat", kept in the text$' \
    '^stop rules: max-tokens 100, stop "on mat" (kept in the text)$'
"$BIN" show stopping --step 5 --format json | jq -r "[.stop.string, (.stop.shown | tostring)] | join(\"|\")" >"$TMP/stop.j"
stop_eq 'on mat|false' "$TMP/stop.j" "show stopping --step 5 json"
"$BIN" export stopping >"$TMP/stop.md"
stop_has "$TMP/stop.md" "export stopping" 'Then it stops: stop string "on mat", not shown\.$'

# The view's text line: cut, the string beside it; the Stopped line says so.
"$BIN" --headless --size 100x24 --keys ':stop "on mat"<Enter><Space><Space>' stopping >"$TMP/out"
sed -n 2p "$TMP/out" >"$TMP/line2"
sed -n 3p "$TMP/out" >"$TMP/line3"
stop_has "$TMP/line2" "the view's text line after stop \"on mat\"" \
    '^ Text: The cat sat \[stopped by "on mat", not shown\]  '
stop_has "$TMP/line3" "the view's Stopped line" '^ Stopped: stop string "on mat", not shown\. '
"$BIN" --headless --size 100x24 --keys ':stop-text keep<Enter>:stop "n m"<Enter><Space><Space>' stopping >"$TMP/out"
sed -n 2p "$TMP/out" >"$TMP/line2"
stop_has "$TMP/line2" "the view after stop-text keep, stop \"n m\"" \
    '^ Text: The cat sat on m \[stopped by "n m", kept in the text\]  '
stop_has "$TMP/out" "the status line after stop-text keep" 'stop "n m"  stop-text keep'
# The lesson's own step 5, and its try line that keeps the string.
"$BIN" --headless --size 100x24 --keys '<Space><Space><Space><Space><Space><Space>.<Space>' stopping >"$TMP/out"
sed -n 2p "$TMP/out" >"$TMP/line2"
stop_has "$TMP/line2" "stopping step 5 with its try stop-text keep" \
    '^ Text: The cat sat on mat \[stopped by "on mat", kept in the text\]  '

# A lesson key, and a bad value named with its option or file:line.
printf '[lesson]\nid = s\ntitle = s\nprompt = 1\n[vocab]\n0 = a\n1 = b\n[settings]\nstop = b a\nstop-text = keep\n[step.1]\nlogits = 0 1\n[step.2]\nlogits = 1 0\n' >"$TMP/stopkey.ini"
stop_same "$(printf 'b b a\n[2 tokens; stopped by stop string "b a", kept in the text]')" generate "$TMP/stopkey.ini"
expect 2 "logitlab: --stop-text: 'cut' is not a way to end the text (strip or keep)" \
    generate stopping --stop-text cut
printf '[lesson]\nid = s\ntitle = s\nprompt = 1\n[vocab]\n0 = a\n1 = b\n[settings]\nstop-text = off\n[step.1]\nlogits = 0 1\n' >"$TMP/stopbad.ini"
expect 2 "logitlab: $TMP/stopbad.ini:9: stop-text: 'off' is not a way to end the text (strip or keep)" \
    generate "$TMP/stopbad.ini"

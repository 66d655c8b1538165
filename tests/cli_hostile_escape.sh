# cli_hostile_escape.sh - sourced by tests/cli.sh (issue 12, classes 3 and 6).
# Class 3: no control character from a file or an argument reaches the
# terminal raw: the INI reader refuses them in values (file:line), and every
# text output (text, CSV, Markdown, JSON, lessons, the messages) escapes what
# comes another way (a file's name, a vocabulary's token, an argument).
# Class 6: a command whose output cannot be written exits 3 and says so.

ESC=$(printf '\033')
BEL=$(printf '\007')
CSI=$(printf '\302\233') # U+009B, C1's CSI, in UTF-8

# raw_free FILE WHAT: FILE holds no ESC, BEL or U+009B byte sequence.
raw_free() {
    if LC_ALL=C grep -q "$ESC\|$BEL\|$CSI" "$1"; then
        bad "$2: a raw control character reached the output: $(od -c "$1" | head -5)"
    else
        ok
    fi
}
# status_is GOT WANT WHAT: the exit status GOT is WANT.
status_is() {
    if [ "$1" -eq "$2" ]; then ok; else bad "$3: status $1, want $2 ($(cat "$TMP/err"))"; fi
}
# has FILE TEXT WHAT: FILE holds the fixed string TEXT.
has() {
    if grep -qF -- "$2" "$1"; then ok; else bad "$3: no '$2' in: $(head -c 600 "$1")"; fi
}

# -- lesson files: a control character in a value is refused with file:line
mkdir -p "$TMP/esc"
printf '[lesson]\nid = fine\ntitle = Fine\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n' >"$TMP/esc/01-fine.ini"
printf '[lesson]\nid = t1\ntitle = T\033[2J\033]0;pwned\007\033[?1049h\302\233\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n' >"$TMP/esc/02-title.ini"
printf '[lesson]\nid = t2\ntitle = T\ntext = fine\n  then \302\233?1049h\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\n' >"$TMP/esc/03-text.ini"
printf '[lesson]\nid = t3\ntitle = T\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2\nnote = ring\007\n' >"$TMP/esc/04-note.ini"
m2="logitlab: $TMP/esc/02-title.ini:3: control character U+001B in the value of 'title'"
m3="logitlab: $TMP/esc/03-text.ini:5: control character U+009B in the value of 'text'"
m4="logitlab: $TMP/esc/04-note.ini:9: control character U+0007 in the value of 'note'"
expect 2 "$m2" show "$TMP/esc/02-title.ini"
raw_free "$TMP/out" "show of a title with ESC"
expect 2 "$m2" show "$TMP/esc/02-title.ini" --format csv
expect 2 "$m3" show "$TMP/esc/03-text.ini"
expect 2 "$m4" show "$TMP/esc/04-note.ini" --format markdown
expect 2 "$m2" export "$TMP/esc/02-title.ini" -o "$TMP/esc-out.md"
if [ -e "$TMP/esc-out.md" ]; then bad "export of a refused lesson wrote $TMP/esc-out.md"; else ok; fi
# (the order of the refused files' messages is the catalog's: checked one by one)
"$BIN" lessons --lessons-dir "$TMP/esc" >"$TMP/out" 2>"$TMP/err"
status_is $? 2 "lessons over a directory with refused files"
has "$TMP/out" "fine           Fine" "lessons lists the good lesson"
raw_free "$TMP/out" "lessons (stdout)"
raw_free "$TMP/err" "lessons (stderr)"
for m in "$m2" "$m3" "$m4" "logitlab: 3 lesson files could not be read"; do
    has "$TMP/err" "$m" "lessons' messages"
done
# The lesson format's own escapes still make control characters on purpose.
printf '[lesson]\nid = nl\ntitle = NL\n[vocab]\n0 = a\n1 = "\\n"\n[step.1]\nlogits = 1 2\n' >"$TMP/nl.ini"
"$BIN" show "$TMP/nl.ini" --format csv >"$TMP/out" 2>"$TMP/err"
has "$TMP/out" '1,1,\n,2,' "a token \"\\n\" from a lesson, in CSV"

# -- strings that do not pass the INI reader: a file's name, a vocabulary's tokens
# Three logits 1, 2, 3; tokens "a", "b ESC [2J", "c U+009B x": c ranks first, b second.
hostile="$TMP/e${ESC}[2J${BEL}${CSI}.npy"
npy "$hostile" '<f4' '(3,)' '\000\000\200\077\000\000\000\100\000\000\100\100'
printf 'a\nb\033[2J\nc\302\233x\n' >"$TMP/esc.vocab"
title="captured logits (e\\x1B[2J\\x07\\xC2\\x9B.npy)"
for fmt in text csv markdown json; do
    "$BIN" show --logits "$hostile" --vocab "$TMP/esc.vocab" --format "$fmt" >"$TMP/out.$fmt" 2>"$TMP/err"
    status_is $? 0 "show --format $fmt of hostile tokens"
    raw_free "$TMP/out.$fmt" "show --format $fmt"
done
has "$TMP/out.text" "captured: $title" "the text report's title"
has "$TMP/out.text" "   1      2  c\\xC2\\x9Bx" "the text table's first row"
has "$TMP/out.text" "   2      1  b\\x1B[2J" "the text table's second row"
has "$TMP/out.csv" '1,2,c\xC2\x9Bx,3,' "the CSV's first row"
has "$TMP/out.csv" '2,1,b\x1B[2J,2,' "the CSV's second row"
has "$TMP/out.markdown" '| 1 | 2 | c\\xC2\\x9Bx |' "the Markdown table"
has "$TMP/out.markdown" '# captured logits (e\\x1B\[2J\\x07\\xC2\\x9B.npy)' "the Markdown title"
# A token's display form is escaped by the vocabulary (one rule for every
# output); JSON then writes its backslashes as \\.
has "$TMP/out.json" '"token": "c\\xC2\\x9Bx"' "JSON's C1 token"
has "$TMP/out.json" '"title": "captured logits (e\u001b[2J\u0007\u009b.npy)"' "JSON's title"
"$BIN" export --logits "$hostile" --vocab "$TMP/esc.vocab" -o "$TMP/esc-export.md" 2>"$TMP/err"
status_is $? 0 "export of hostile tokens"
raw_free "$TMP/esc-export.md" "export -o"
has "$TMP/esc-export.md" '# captured logits (e\\x1B\[2J\\x07\\xC2\\x9B.npy)' "export's title"
"$BIN" generate --logits "$hostile" --vocab "$TMP/esc.vocab" --temperature 0 --format csv >"$TMP/out" 2>"$TMP/err"
raw_free "$TMP/out" "generate --format csv"
has "$TMP/out" '1,2,c\xC2\x9Bx,' "generate's CSV row"

# -- messages that quote an argument or a path
expect 2 "logitlab: unknown option '--x\\x1B[2Jy' (logitlab --help lists them)" "--x${ESC}[2Jy"
expect 2 "logitlab: unknown option '--x\\xC2\\x9By' (logitlab --help lists them)" "--x${CSI}y"
"$BIN" show "no${ESC}]0;pwned${BEL}such" >"$TMP/out" 2>"$TMP/err"
status_is $? 2 "show of a lesson that does not exist"
raw_free "$TMP/err" "a missing lesson's name"
has "$TMP/err" "no lesson 'no\\x1B]0;pwned\\x07such'" "a missing lesson's name"
expect 2 "logitlab: $TMP/no\\x1B[2J.ini: cannot open: No such file or directory" show "$TMP/no${ESC}[2J.ini"
"$BIN" show --logits "$hostile" --vocab "$TMP/esc.vocab" --find "z${ESC}[2J" >"$TMP/out" 2>"$TMP/err"
raw_free "$TMP/err" "--find with ESC"
has "$TMP/err" "--find 'z\\x1B[2J': no such token" "--find with ESC"
# A configuration value with ESC: refused by line; the warning escapes what it quotes.
mkdir -p "$XDG_CONFIG_HOME/logitlab"
printf '[display]\ntheme = mono\033[2J\n' >"$XDG_CONFIG_HOME/logitlab/config.ini"
expect 0 "logitlab: warning: $XDG_CONFIG_HOME/logitlab/config.ini:2: control character U+001B in the value of 'theme' (the built-in defaults are used)" lessons
printf '[u\033[2Ji]\ntheme = mono\n' >"$XDG_CONFIG_HOME/logitlab/config.ini"
"$BIN" lessons >"$TMP/out" 2>"$TMP/err"
raw_free "$TMP/err" "a config section name with ESC"
rm -f "$XDG_CONFIG_HOME/logitlab/config.ini"

# -- class 6: output that cannot be written is an error (exit 3, one line)
if [ -w /dev/full ]; then
    full="logitlab: standard output: No space left on device"
    for args in "lessons" "--help" "--version" "show toy" "show toy --format csv" \
        "show toy --format json" "show toy --format markdown" "export toy" "generate toy" \
        "generate toy --format json" "--headless --keys q"; do
        # shellcheck disable=SC2086 # args are words on purpose
        "$BIN" $args >/dev/full 2>"$TMP/err"
        status=$?
        if [ "$status" -eq 3 ] && [ "$(cat "$TMP/err")" = "$full" ]; then
            ok
        else
            bad "logitlab $args >/dev/full: status $status, stderr '$(cat "$TMP/err")'; want 3 '$full'"
        fi
    done
fi
# A reader that went away is no error, even when SIGPIPE was ignored: no message.
sh -c 'trap "" PIPE; sleep 0.3; "$1" export toy 2>"$2/err"; echo $? >"$2/status"' sh "$BIN" "$TMP" | true
if [ -s "$TMP/err" ] || [ "$(cat "$TMP/status")" -eq 3 ]; then
    bad "a closed pipe (SIGPIPE ignored): status $(cat "$TMP/status"), stderr '$(cat "$TMP/err")'"
else
    ok
fi

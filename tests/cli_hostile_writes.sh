# cli_hostile_writes.sh - sourced by tests/cli.sh (issue 12): interrupted
# writes (class 4), options that do nothing (class 8), messages that
# mislead (class 9).

# ---- class 4: whatever ends the program leaves no file behind ----

# Whether a file descriptor of process $1 is open on a file of directory $2
# (by name, or "$2/#123 (deleted)": a file without a name there).
open_in() {
    for fd in /proc/"$1"/fd/*; do
        case $(readlink "$fd" 2>/dev/null) in "$2"/*) return 0 ;; esac
    done
    return 1
}
# A background job of a shell without job control ignores SIGINT: env puts
# the default action back (coreutils 8.31); without it SIGINT is not tried.
if env --default-signal=INT true 2>/dev/null; then
    signals="INT TERM HUP"
else
    signals="TERM HUP"
fi
for sig in $signals; do
    d="$TMP/killed-$sig"
    mkdir "$d"
    env --default-signal=INT,TERM,HUP "$BIN" export real-story --hidden-size 512 -o "$d/out.md" \
        2>"$TMP/err" &
    pid=$!
    n=0
    while ! open_in "$pid" "$d" && [ $n -lt 600 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    [ $n -lt 600 ] || bad "export -o never opened its output in $d"
    # A step or two written: the export takes about 0.3 s from here (ASan), so a
    # longer wait could find it done, or in the leak check after its rename.
    sleep 0.05
    kill -s "$sig" "$pid"
    wait "$pid" 2>/dev/null # (the shell's own "Terminated" line)
    status=$?
    case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
    left=$(ls -A "$d")
    if [ "$status" -eq "$want" ] && [ -z "$left" ]; then
        ok
    else
        bad "export killed by SIG$sig mid-write: status $status (want $want), left '$left'"
    fi
done

# A write past the file size limit: killed by SIGXFSZ, or (ignored) a
# write error, exit 3; nothing left either way.
d="$TMP/too-large"
mkdir "$d"
# (an inner shell waits for it, so that its "File size limit exceeded" line
# goes to /dev/null)
ERR="$TMP/err" sh -c 'ulimit -f 8; "$@" 2>"$ERR"' sh "$BIN" export real-story --hidden-size 512 \
    -o "$d/out.md" 2>/dev/null
status=$?
left=$(ls -A "$d")
if [ "$status" -eq 153 ] && [ -z "$left" ]; then
    ok
else
    bad "export past ulimit -f: status $status (want 153, SIGXFSZ), left '$left'"
fi
(
    trap '' XFSZ
    ulimit -f 8
    exec "$BIN" export real-story --hidden-size 512 -o "$d/out.md"
) 2>"$TMP/err"
status=$?
left=$(ls -A "$d")
case $(cat "$TMP/err") in "logitlab: "*": File too large") said=1 ;; *) said=0 ;; esac
if [ "$status" -eq 3 ] && [ -z "$left" ] && [ $said = 1 ]; then
    ok
else
    bad "export past ulimit -f, SIGXFSZ ignored: status $status, left '$left', $(cat "$TMP/err")"
fi

# A legal long name (249 bytes; the temporary once added 11 and passed
# NAME_MAX) is written, and nothing beside it.
d="$TMP/long-name"
mkdir "$d"
name=$(printf '%0249d' 0)
expect 0 "" export toy -o "$d/$name"
if cmp -s "$d/$name" "$GOLDEN/export-toy.md" && [ "$(ls -A "$d")" = "$name" ]; then
    ok
else
    bad "export -o a 249-byte name: $(ls -A "$d")"
fi
expect 0 "" export toy -o "$d/$name" --force
if [ "$(ls -A "$d")" = "$name" ]; then
    ok
else
    bad "export --force over a 249-byte name: $(ls -A "$d")"
fi

# A long path keeps its reason (messages were cut at 256 bytes).
long="$TMP/none"
while [ ${#long} -lt 600 ]; do long="$long/abcdefghijklmnopqrstuvwxyz"; done
expect 2 "logitlab: $long/out.md: cannot write there: No such file or directory" \
    export toy -o "$long/out.md"

# Empty file names are refused by the option's name.
expect 2 "logitlab: --output: an empty file name" export toy -o ''
expect 2 "logitlab: --output: an empty file name" show toy --output=
expect 2 "logitlab: --save-logits: an empty file name" show toy --save-logits ''
expect 2 "logitlab: --logits: an empty file name" show --logits ''
expect 2 "logitlab: --lessons-dir: an empty directory name" show toy --lessons-dir ''

# ---- class 8: an option a command would ignore is refused ----

expect 2 "logitlab: --step: generate does not take it" generate toy --step 2
expect 2 "logitlab: --step: export does not take it" export toy --step 2
expect 2 "logitlab: --size: show does not take it" show toy --size 100x30
expect 2 "logitlab: --top: generate gives each token's alternatives in json and markdown" generate toy --top 3
expect 2 "logitlab: --draws: export does not take it" export toy --draws 10
expect 2 "logitlab: --find: generate does not take it" generate toy --find Paris
expect 2 "logitlab: --theme: show does not take it" show toy --theme mono
expect 2 "logitlab: --ascii: export does not take it" export toy --ascii
expect 2 "logitlab: --format: the interactive view does not take it" --headless toy --format json
expect 2 "logitlab: --top: the interactive view does not take it" --headless toy --top 3
expect 2 "logitlab: --step: lessons does not take it" lessons --step 2
expect 2 "logitlab: --seed: lessons does not take it" lessons --seed 2
expect 2 "logitlab: --hidden-size: lessons does not take it" lessons --hidden-size 64
expect 2 "logitlab: --size needs --headless (a terminal has its own size)" toy --size 100x30
expect 2 "logitlab: --prompt-file goes with --model FILE.gguf" show toy --prompt-file "$TMP/p.txt"
expect 2 "logitlab: --prompt and --prompt-file are two prompts: give one" \
    show -m "$TMP/m.gguf" -p hi --prompt-file "$TMP/p.txt"
# what each command takes still works
expect 0 "" --headless --size 100x30 --step 2 toy
expect 0 "" show toy --step 2 --top 3
expect 0 "" export toy --top 3

# --find '': once found " "; refused. --find ' ' is the space token.
expect 2 "logitlab: --find: an empty token (give its text, or #ID for an id)" \
    show real-france --hidden-size 512 --find ''

# --top above the rows a step ranks (4,096: once cut there without a word,
# CSV without a tail row): refused with the limit; at the limit, every row.
expect 2 "logitlab: --top: 200000 is more than 4096, the most rows a step ranks" \
    show real-france --hidden-size 512 --top 200000
expect 2 "logitlab: --top: 4097 is more than 4096, the most rows a step ranks" \
    export toy --top 4097
n=$("$BIN" show real-france --hidden-size 512 --top 4096 --format csv 2>"$TMP/err" | wc -l)
if [ "$n" -eq 4097 ]; then
    ok
else
    bad "show --top 4096 --format csv: $n lines (want a header and 4096 rows)"
fi

# --logits is a .npy, known by its content: a file without the suffix is
# played; a lesson (a file that is not a .npy, or an id) is refused by name.
npy "$TMP/captured.bin" '<f4' '(3,)' '\000\000\200\077\000\000\000\100\000\000\100\100'
printf 'a\nb\nc\n' >"$TMP/abc3.vocab"
expect 0 "" show --logits "$TMP/captured.bin" --vocab "$TMP/abc3.vocab"
if grep -q 'c' "$TMP/out"; then
    ok
else
    bad "show --logits captured.bin: $(cat "$TMP/out")"
fi
expect 2 "logitlab: lessons/02-toy.ini: not a .npy file (it does not start with \\x93NUMPY)" \
    show --logits lessons/02-toy.ini
expect 2 "logitlab: lessons/02-toy.ini: not a .npy file (it does not start with \\x93NUMPY)" \
    --headless --logits lessons/02-toy.ini
expect 2 "logitlab: toy: cannot open: No such file or directory" show --logits toy

# ---- class 9: the hidden size a full-size lesson needs, said once ----

for h in 8 136 432; do
    expect 2 "logitlab: scenario france: its logits need a hidden size of at least 440 (this head has $h)" \
        show real-france --hidden-size "$h"
done
expect 0 "" show real-france --hidden-size 440 --top 1
expect 2 "logitlab: scenario story: its logits need a hidden size of at least 440 (this head has 432)" \
    export real-story --hidden-size 432
expect 0 "" show real-story --hidden-size 440 --top 1
# A directory as the output is named as such, with or without --force.
mkdir -p "$TMP/outdir"
expect 2 "logitlab: $TMP/outdir is not a regular file: not replaced" show toy -o "$TMP/outdir"
expect 2 "logitlab: $TMP/outdir is not a regular file: not replaced" show toy -o "$TMP/outdir" --force

# ---- one output file per purpose (issue 29, part 4) ----
# -o and --save-logits naming one file, after links and '..' are resolved,
# are refused before anything is written (with --force the table replaced
# the logits and the status was 0); a run that fails writes neither file.
ONE="$HERE/../data/stories260K.gguf"
mkdir -p "$TMP/one/sub"
ln -s same.npy "$TMP/one/link.npy"
expect 2 "logitlab: --save-logits: '$TMP/one/same.npy' is the file of --output too: give each its own" \
    show -m "$ONE" -p Once -o "$TMP/one/same.npy" --save-logits "$TMP/one/same.npy" --force
expect 2 "logitlab: --save-logits: '$TMP/one/same.npy' is the file of --output too: give each its own" \
    show -m "$ONE" -p Once -o "$TMP/one/link.npy" --save-logits "$TMP/one/same.npy"
expect 2 "logitlab: --save-logits: '$TMP/one/sub/../t.txt' is the file of --output too: give each its own" \
    show -m "$ONE" -p Once -o "$TMP/one/t.txt" --save-logits "$TMP/one/sub/../t.txt"
: >"$TMP/one/old.npy"
expect 2 "logitlab: --save-logits: $TMP/one/old.npy exists: add --force to replace it" \
    show -m "$ONE" -p Once -o "$TMP/one/new.txt" --save-logits "$TMP/one/old.npy"
left=$(ls "$TMP/one" | tr '\n' ' ')
[ "$left" = "link.npy old.npy sub " ] && ok || bad "files left by the refused runs: $left"
expect 0 "" show -m "$ONE" -p Once -o "$TMP/one/t.txt" --save-logits "$TMP/one/t.npy"
[ -s "$TMP/one/t.txt" ] && [ -s "$TMP/one/t.npy" ] && ok || bad "show -o and --save-logits: both files"

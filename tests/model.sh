#!/bin/sh
# Real models (--model FILE.gguf) end to end, on small GGUF files generated
# here: random weights, the real Llama 3 and Llama 2 vocabularies, every
# weight type (tests/oracle/models.txt; each golden's `gen` line says how).
#   1. model_check: token ids as llama.cpp's, logits within float rounding of
#      the exact reference and within llama.cpp's own rounding of llama.cpp's,
#      the greedy continuation as the exact reference's (tests/golden/model/,
#      written by `make test-oracle`);
#   2. the command line: show, generate, --save-logits read back by --logits,
#      the refusals, and `logitlab tokenize` on llama.cpp's own tokenizer tests
#      (tests/golden/vocab/: the generated files' vocabularies are its llama-bpe
#      and llama-spm ones);
#   3. the interactive view in a real terminal (tmux) on a model: every key of
#      the full-size lessons, the prompt edited, a token forced.
# Usage: tests/model.sh LOGITLAB GEN_MODEL MODEL_CHECK [SAN_MODEL_CHECK]
set -u
BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
GEN=${2:?usage: tests/model.sh LOGITLAB GEN_MODEL MODEL_CHECK [SAN_MODEL_CHECK]}
CHECK=${3:?usage: tests/model.sh LOGITLAB GEN_MODEL MODEL_CHECK [SAN_MODEL_CHECK]}
SAN_CHECK=${4:-}
HERE=$(cd "$(dirname "$0")" && pwd)
GOLD="$HERE/golden/model"
MODELS=build/models
# shellcheck source=tests/lib.sh
. "$HERE/lib.sh"
mkdir -p "$MODELS"

# model NAME: the generated file of golden NAME, made again when missing or
# older than the generator (the same arguments give the same bytes).
model() {
    f="$MODELS/$1.gguf"
    if [ ! -f "$f" ] || [ -n "$(find "$GEN" -newer "$f" 2>/dev/null)" ]; then
        args=$(sed -n 's/^gen //p' "$GOLD/$1.ref.txt")
        # shellcheck disable=SC2086 # the generator's options, one word each
        "$GEN" $args -o "$f" >/dev/null || { bad "gen_model $args failed"; return 1; }
    fi
    echo "$f"
}

# 1. Every golden model against its goldens.
for ref in "$GOLD"/*.ref.txt; do
    name=$(basename "$ref" .ref.txt)
    type=$(sed -n 's/^gen .*--type \([A-Z0-9_]*\).*/\1/p' "$ref")
    f=$(model "$name") || continue
    if line=$("$CHECK" "$f" "$ref" "$GOLD/$name.llama.txt" "$type"); then ok; else bad "$name"; fi
    printf '  %-12s %s\n' "$name" "$line"
done
# The same under AddressSanitizer and UBSan, on one model of each vocabulary.
if [ -n "$SAN_CHECK" ]; then
    for name in llama3-q4_k llama2-q8_0; do
        type=$(sed -n 's/^gen .*--type \([A-Z0-9_]*\).*/\1/p' "$GOLD/$name.ref.txt")
        if "$SAN_CHECK" "$(model "$name")" "$GOLD/$name.ref.txt" "$GOLD/$name.llama.txt" \
            "$type" >"$TMP/san" 2>&1; then ok; else bad "sanitized $name: $(cat "$TMP/san")"; fi
    done
fi

# 2. The command line (the sanitizer build when that is what was given).
M3=$(model llama3-q8_0)
M2=$(model llama2-f32)
expect() { # expect STATUS "STDERR" ARGS...
    want_status=$1 want_err=$2
    shift 2
    "$BIN" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
    if [ "$status" -ne "$want_status" ] || [ "$(cat "$TMP/err")" != "$want_err" ]; then
        bad "logitlab $*: status $status, stderr '$(cat "$TMP/err")'; want $want_status '$want_err'"
    else
        ok
    fi
}
# The prompt's ids are llama.cpp's (golden prompt 0), BOS first.
want=$(sed -n 's/^tokens [0-9]* //p' "$GOLD/llama3-q8_0.llama.txt" | head -n 1 | tr ' ' ',')
got=$("$BIN" show --model "$M3" -p "The capital of France is" --format json --top 3 |
    jq -c '.context' | tr -d '[]')
[ "$got" = "$want" ] && ok || bad "show --model: context [$got], llama.cpp [$want]"
# The greedy text is the exact reference's continuation (golden prompt 0).
want=$(sed -n 's/^greedy [0-9]* //p' "$GOLD/llama3-q8_0.ref.txt" | head -n 1 | tr ' ' ',')
got=$("$BIN" generate --model "$M3" -p "The capital of France is" --temperature 0 \
    --max-tokens 8 --format json | jq -c '.generated' | tr -d '[]')
[ "$got" = "$want" ] && ok || bad "generate --model greedy: [$got], the exact reference [$want]"
# --save-logits writes what --logits reads: the same best token, the same logit.
"$BIN" show --model "$M3" -p "Once upon a time" --save-logits "$TMP/row.npy" --format json \
    --top 1 | jq -c '.rows[0] | [.id, .logit]' >"$TMP/a"
"$BIN" show --logits "$TMP/row.npy" --format json --top 1 | jq -c '.rows[0] | [.id, .logit]' \
    >"$TMP/b"
cmp -s "$TMP/a" "$TMP/b" && ok || bad "--save-logits then --logits: $(cat "$TMP/a") / $(cat "$TMP/b")"
expect 2 "logitlab: --save-logits: $TMP/row.npy exists: add --force to replace it" \
    show --model "$M3" --save-logits "$TMP/row.npy"
expect 0 "" show --model "$M3" --save-logits "$TMP/row.npy" --force
# Llama 2's SentencePiece vocabulary: BOS 1, then its pieces (golden prompt 0).
want=$(sed -n 's/^tokens [0-9]* //p' "$GOLD/llama2-f32.llama.txt" | head -n 1 | tr ' ' ',')
got=$("$BIN" show --model "$M2" -p "The capital of France is" --format json --top 1 |
    jq -c '.context' | tr -d '[]')
[ "$got" = "$want" ] && ok || bad "llama2 context [$got], llama.cpp [$want]"
# A full-size lesson's own prompt through the real model.
got=$("$BIN" show real-france --model "$M3" --format json --top 1 | jq -c '.context' | tr -d '[]')
[ "$got" = "128000,791,6864,315,9822,374" ] && ok || bad "real-france --model: [$got]"
# A lesson may name a model file: [model] file = PATH (relative to the lesson),
# its prompt-text encoded by the model's tokenizer.
mkdir -p "$TMP/lessons"
printf '[lesson]\nid = mine\ntitle = My model\nprompt-text = The capital of France is\ntext = A lesson on a model file.\n\n[model]\nfile = %s\nsteps = 4\n' \
    "$(pwd)/$M3" >"$TMP/lessons/mine.ini"
got=$("$BIN" show "$TMP/lessons/mine.ini" --format json --top 1 | jq -c '[.lesson, .steps, .context]')
[ "$got" = '["mine",4,[128000,791,6864,315,9822,374]]' ] && ok || bad "[model] file: $got"
printf '[lesson]\nid = bad\ntitle = b\ntext = t\n\n[model]\nfile = nowhere.gguf\n' >"$TMP/lessons/bad.ini"
expect 2 "logitlab: $TMP/lessons/bad.ini:7: file: $TMP/lessons/nowhere.gguf: cannot open: No such file or directory" \
    show "$TMP/lessons/bad.ini"
# --chat: Llama 3's header format (the generated Llama 3 files carry such a
# template): BOS, <|start_header_id|> user <|end_header_id|> "\n\n", the text,
# <|eot_id|>, then the assistant's header and "\n\n" (ids of the Llama 3 vocabulary).
got=$("$BIN" show --model "$M3" -p "Hi" --chat --format json --top 1 | jq -c '.context' | tr -d '[]')
want="128000,128006,882,128007,271,13347,128009,128006,78191,128007,271"
[ "$got" = "$want" ] && ok || bad "--chat: [$got], want [$want]"
# A JSON schema as a mask: random weights cannot write JSON, so every seed's
# text parses only because the grammar removed every token that could not
# continue it (issue 33). Both vocabularies; the schema's strings are short
# and its integers bounded, so each text ends on the end token.
SCHEMA='{"type":"object","properties":{"name":{"type":"string","maxLength":8},"age":{"type":"integer"},"pet":{"enum":["cat","dog",null]},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string","maxLength":4},"maxItems":3}},"required":["name","age","pet","ok","tags"]}'
for seed in $(seq 1 20); do
    m=$M2
    [ $((seed % 2)) -eq 0 ] && m=$M3
    if "$BIN" generate --model "$m" -p "" --json-schema "$SCHEMA" --seed "$seed" --max-tokens 600 \
        --format json >"$TMP/json" 2>"$TMP/err" &&
        jq -r .stop.rule "$TMP/json" | grep -qx eos &&
        jq -r .text "$TMP/json" | jq -e '(.name | length <= 8) and (.tags | length <= 3) and (.ok | type == "boolean")' >/dev/null; then
        ok
    else
        bad "generate --json-schema, seed $seed on $m: $(cat "$TMP/err") $(jq -c '[.text, .stop]' "$TMP/json" 2>&1)"
    fi
done
# A bad schema gets one line with the place; a text outside the grammar too.
expect 2 "logitlab: --json-schema: json-schema at byte 9: expected : after the member name" \
    show --model "$M2" -p "" --json-schema '{"type" 1}'
# The generated Llama 2 files carry no template: --chat says so.
expect 2 "logitlab: --chat: $M2 has no chat template logitlab knows (ChatML (<|im_start|>), Llama 2's [INST], Phi-3's <|user|>, Gemma's <start_of_turn>, Llama 3's headers)" \
    show --model "$M2" -p hi --chat
# ChatML on a qwen2 file (gen_model --arch qwen2: Llama 3's ids, with reserved
# tokens 128002 and 128003 as <|im_start|> and <|im_end|>): no BOS (Qwen's
# files add none and the format writes none), <|im_start|> user "\n", the
# text, <|im_end|> "\n", then <|im_start|> assistant "\n", as llama.cpp's
# ChatML writes one user turn with the generation prompt.
MQ="$MODELS/qwen2-chat.gguf"
"$GEN" --arch qwen2 --layers 1 --embd 64 --heads 4 --kv-heads 2 --ff 128 --tied 1 --seed 4 \
    --type F32 -o "$MQ" >/dev/null && ok || bad "gen_model --arch qwen2"
got=$("$BIN" show --model "$MQ" -p "Hi" --chat --format json --top 1 | jq -c '.context' | tr -d '[]')
want="128002,882,198,13347,128003,198,128002,78191,198"
[ "$got" = "$want" ] && ok || bad "--chat ChatML: [$got], want [$want]"
# ChatML's template over a vocabulary without its tokens: refused by the table's marks.
MCM="$MODELS/chatless-chatml.gguf"
"$GEN" --arch llama2 --layers 1 --embd 64 --heads 4 --kv-heads 4 --ff 128 --tied 1 --seed 3 \
    --type F32 --template chatml -o "$MCM" >/dev/null && ok || bad "gen_model --template chatml"
expect 2 "logitlab: --chat: $MCM's chat template uses <|im_start|>, but its vocabulary has no such token" \
    show --model "$MCM" -p hi --chat
# Llama 3's template over a vocabulary without its header tokens: refused,
# where it spelled them out as bytes (issue 29, part 5).
MC="$MODELS/chatless.gguf"
"$GEN" --arch llama2 --layers 1 --embd 64 --heads 4 --kv-heads 4 --ff 128 --tied 1 --seed 3 \
    --type F32 --template llama3 -o "$MC" >/dev/null && ok || bad "gen_model --template llama3"
expect 2 "logitlab: --chat: $MC's chat template uses <|start_header_id|>, but its vocabulary has no such token" \
    show --model "$MC" -p hi --chat
# A run past the model's context names the model (issue 29, part 6): a
# context of 16, a model lesson of 64 steps.
MS="$MODELS/ctx16.gguf"
"$GEN" --arch llama2 --layers 1 --embd 64 --heads 4 --kv-heads 4 --ff 128 --tied 1 --seed 3 \
    --type F32 --ctx 16 -o "$MS" >/dev/null && ok || bad "gen_model --ctx 16"
"$BIN" generate --model "$MS" -p "hi there" >/dev/null 2>"$TMP/err"
[ "$(cat "$TMP/err")" = "logitlab: $MS: a context of 17 tokens, more than the 16 this model runs (its context; --max-tokens stops the run sooner)" ] &&
    ok || bad "generate past the context: $(cat "$TMP/err")"
expect 2 "logitlab: --prompt goes with --model FILE.gguf" show toy -p hi
expect 2 "logitlab: --save-logits goes with show --model FILE.gguf" generate toy --save-logits x.npy
expect 2 "logitlab: --logits and --model are two sources of logits: give one" \
    show --logits "$TMP/row.npy" --model "$M3"
expect 2 "logitlab: --model runs a full-size lesson (real-france, ...) or none; 'toy' has its own logits" \
    show toy --model "$M3"

# tokenize: llama.cpp's tokenizer tests (its models/ggml-vocab-llama-bpe.gguf and
# -llama-spm.gguf vectors, copied by `make test-oracle`; the in-tree vocabularies are those
# two: data/README.md), then BOS and special tokens as the file and the flags say ("Hello
# world" is 9906 1917 and 15043 3186 in those vectors; BOS 128000 and 1).
vectors() { # NAME FILE.gguf
    if line=$("$HERE/vocab.sh" "$BIN" "$2" "$HERE/golden/vocab/$1.inp" "$HERE/golden/vocab/$1.out"); then
        ok
    else
        bad "llama.cpp's tokenizer tests, $1"
    fi
    printf '%s\n' "$line" | sed 's/^/  /'
}
vectors llama-bpe "$M3"
vectors llama-spm "$M2"
[ "$("$BIN" tokenize -m "$M3" -p "Hello world")" = "128000 9906 1917" ] && ok || bad "tokenize: BOS"
[ "$("$BIN" tokenize -m "$M2" --no-bos -p "Hello world")" = "15043 3186" ] && ok || bad "tokenize --no-bos"
[ "$("$BIN" tokenize -m "$M3" --no-bos --special -p "<|eot_id|>")" = "128009" ] && ok ||
    bad "tokenize --special"
expect 2 "logitlab: nowhere.gguf: cannot open: No such file or directory" tokenize -m nowhere.gguf -p hi

# 3. The view in a terminal, on the model.
if ! command -v tmux >/dev/null 2>&1; then
    echo "model: tmux skipped: tmux is not installed (make test installs it)"
else
    SOCK="logitlab-model-$$"
    T="tmux -L $SOCK -f /dev/null"
    trap '$T kill-server 2>/dev/null; rm -rf "$TMP"' EXIT INT TERM
    keys() { $T send-keys -t t "$@"; }
    check() { if wait_for "$2" 20; then ok; else bad "$1: '$2' never appeared"; $T capture-pane -p -t t | sed 's/^/  | /'; fi; }
    $T new-session -d -s t -x 120 -y 40 "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME sh"
    wait_for '$' || bad "no shell prompt"
    keys "$BIN -m $M3 -p 'The capital of France is'; echo rc=\$?" Enter
    check "the model opens" "logitlab  model: logitlab test llama3 Q8_0"
    check "its prompt's tokens" "France"
    check "the head's paragraph" "Last hidden vector h: 256 values"
    check "the best token is the exact reference's" "affles"
    keys Space
    check "Space takes the step" "step 1 drew"
    keys Left
    check "Left walks back" "step 1, taken"
    keys Right t T k K p P m M r R y Y z Z f g o s u
    check "the setting keys" "seed 2"
    keys x D
    check "D counts draws" "10,000 draws"
    keys D ":find #12366" Enter
    check "find a token" "found ␣Paris (id 12366)"
    keys w
    check "w takes the found token" "took \"␣Paris\", your choice instead of the draw"
    keys ":take ." Enter
    check ":take by its text" "took \".\", your choice"
    keys e
    check "e opens the prompt line on the prompt" ":prompt The capital of France is"
    keys Escape ":prompt Once upon a time" Enter
    check ":prompt runs the new prompt" "prompt: 5 tokens"
    keys "?"
    check "? shows the keys, e and w among them" "a model: edit the prompt; take the found token"
    keys x l
    check "l shows the lesson text on the whole screen" "The prompt, 5 tokens:"
    keys x Home
    check "Home starts again" "step 1/64"
    # The text view (c, issue 31) on a model run: three steps, another
    # token at the second, the rest drawn again, then the first text back.
    keys Space Space Space c
    check "c shows the text view" "text 1 of 1, 3 tokens"
    keys Left Down Enter
    check "Enter at the second token branches" "text 2 of 2: step 2 took"
    keys "["
    check "[ brings the first text back" "text 1 of 2, 3 tokens"
    keys c Home
    check "Home again" "step 1/64"
    keys B
    check "B opens the batch view" "Batch of 8"
    keys Space
    check "Space steps every request" "batch of 8: step 1, "
    keys B q
    check "q quits, the terminal restored" "rc=0"
    # Vocabularies of any size (issue 32, part 4): Qwen's 151,936 rows and
    # Gemma 3's 262,144 at full size, small widths (gen_model --vocab-size
    # pads them as their files are padded). Every pane at 120x40 (the table
    # with its tail line, the histogram of all the tokens), the last id
    # found and taken, the draws, the batch.
    commas() { printf '%d' "$1" | sed -E ':a;s/([0-9])([0-9]{3})($|,)/\1,\2\3/;ta'; }
    # The Qwen model also turns only 16 of each head's 32 values (as Phi-4-mini
    # turns 96 of 128), which the lesson pane says.
    for spec in "qwen2 151936 [PAD151935] --kv-heads 1 --head-dim 32 --vocab-size 151936 --rot 16" \
        "gemma3 262144 <unused262143> --kv-heads 1 --head-dim 32"; do
        set -- $spec
        arch=$1 n=$2 last=$3
        shift 3
        nn=$(commas "$n")
        MF="$MODELS/full-$arch.gguf"
        [ -f "$MF" ] && [ -z "$(find "$GEN" -newer "$MF")" ] ||
            "$GEN" --arch "$arch" --type Q8_0 --layers 2 --embd 64 --heads 2 --ff 128 --seed 23 \
                "$@" -o "$MF" >/dev/null || bad "gen_model $arch $*"
        keys clear Enter # so that rc=0 below is this run's
        keys "$BIN -m $MF -p 'Once upon a time'; echo rc=\$?" Enter
        check "$arch: the model opens" "step 1/64"
        check "$arch: the table's tail line" "$(commas $((n - 20))) more tokens (after rank 20)"
        check "$arch: the histogram of all the tokens" "z' of all $nn tokens"
        if [ "$arch" = qwen2 ]; then
            check "$arch: the pane says how much of a head turns" "of each head's 32 values"
        fi
        keys D
        check "$arch: D counts draws" "10,000 draws"
        keys D ":find #$((n - 1))" Enter
        check "$arch: find the last id" "found $last (id $((n - 1)))"
        keys w
        check "$arch: w takes it" "took \"$last\", your choice"
        keys B
        check "$arch: B opens the batch view" "Batch of 8"
        keys Space
        check "$arch: Space steps every request" "batch of 8: step 1, "
        keys B q
        check "$arch: q quits" "rc=0"
    done
    # The text view at the classroom's other sizes (issue 31): a new session
    # t of each size before the old one goes, so the server stays up.
    for size in 80x24 200x60; do
        $T rename-session -t t old
        $T new-session -d -s t -x "${size%x*}" -y "${size#*x}" "env PS1='$ ' LC_ALL=C.UTF-8 XDG_CONFIG_HOME=$XDG_CONFIG_HOME sh"
        $T kill-session -t old
        wait_for '$' || bad "$size: no shell prompt"
        keys "$BIN -m $M3 -p 'Once upon a time'; echo rc=\$?" Enter
        check "$size: the model opens" "step 1/64"
        keys Space Space Space c
        check "$size: c shows the text view" "Text view"
        keys Left Down Enter
        check "$size: Enter at the second token branches" "text 2 of 2"
        keys "["
        check "$size: [ brings the first text back" "text 1 of 2"
        keys c q
        check "$size: q quits" "rc=0"
    done
fi

# -m NAME: a model by Ollama's name (issue 32, part 5). A fake Ollama tree: a
# manifest whose model layer (digest before mediaType, as the object's keys
# may come) names a blob, the qwen2 file's bytes; -m qwen:tiny opens that
# blob, the same context as the file itself. None of the variables that
# move a manager's folder may come from the tester's environment.
unset OLLAMA_MODELS LMSTUDIO_MODELS LLAMA_CACHE XDG_CACHE_HOME HF_HUB_CACHE HUGGINGFACE_HUB_CACHE HF_HOME
O="$TMP/home/.ollama/models"
mkdir -p "$O/manifests/registry.ollama.ai/library/qwen" "$O/blobs"
H=$(sha256sum "$MQ" | cut -d' ' -f1)
cp "$MQ" "$O/blobs/sha256-$H"
printf '{"schemaVersion":2,"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:%064d","size":485},"layers":[{"digest":"sha256:%s","mediaType":"application/vnd.ollama.image.model","size":1},{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:%064d","size":1}]}' \
    1 "$H" 2 >"$O/manifests/registry.ollama.ai/library/qwen/tiny"
want=$("$BIN" show --model "$MQ" -p "Hi there" --format json --top 1 | jq -c '.context')
got=$(HOME="$TMP/home" "$BIN" show --model qwen:tiny -p "Hi there" --format json --top 1 | jq -c '.context')
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "-m qwen:tiny: $got, want $want"
printf '{"layers":[]}' >"$O/manifests/registry.ollama.ai/library/qwen/broken"
# Names Ollama shows with a namespace, and with a host (what it pulled from
# Hugging Face): the same manifest under manifests/HOST/NAMESPACE/MODEL/TAG.
mkdir -p "$O/manifests/registry.ollama.ai/someone/qwen" "$O/manifests/hf.co/org/Qwen-GGUF"
cp "$O/manifests/registry.ollama.ai/library/qwen/tiny" "$O/manifests/registry.ollama.ai/someone/qwen/q8"
cp "$O/manifests/registry.ollama.ai/library/qwen/tiny" "$O/manifests/hf.co/org/Qwen-GGUF/Q8_0"
for name in someone/qwen:q8 hf.co/org/Qwen-GGUF:Q8_0; do
    got=$(HOME="$TMP/home" "$BIN" show --model "$name" -p "Hi there" --format json --top 1 | jq -c '.context')
    [ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "-m $name: $got, want $want"
done

# LM Studio's and llama.cpp's folders under the same HOME: PUBLISHER/REPO/
# FILE.gguf (two publishers, and a name with an escape sequence in it),
# llama.cpp's cache (a model and a file that is no GGUF), and the Hugging
# Face cache of llama-cli -hf (a snapshot's link into blobs/). Tiny models of
# their own seeds, so that each name is seen to open its own file. What must
# not be listed: a file directly in LM Studio's folder (LM Studio does not see
# it either), one a folder too deep, a text file, and a link back up (a loop).
L="$TMP/home/.lmstudio/models"
C="$TMP/home/.cache/llama.cpp"
HUB="$TMP/home/.cache/huggingface/hub"
D="$HUB/models--org--delta-GGUF"
ESC=$(printf '\033')
mkdir -p "$L/pub-a/repo-a" "$L/pub-b/repo-b/deep" "$C" "$D/blobs" "$D/snapshots/c0ffee"
tiny() { # tiny FILE SEED ARCH TYPE
    "$GEN" --arch "$3" --vocab tiny --layers 1 --embd 64 --heads 4 --kv-heads 2 --ff 64 \
        --tied 1 --seed "$2" --type "$4" -o "$1" >/dev/null || bad "gen_model $1"
}
tiny "$L/pub-a/repo-a/alpha.gguf" 5 llama3 Q8_0
tiny "$L/pub-b/repo-b/beta.gguf" 6 llama3 F32
tiny "$C/gamma.gguf" 7 qwen3 F32
tiny "$D/blobs/0123abcd" 8 llama2 Q8_0
ln -s ../../blobs/0123abcd "$D/snapshots/c0ffee/delta.gguf"
cp "$L/pub-a/repo-a/alpha.gguf" "$L/pub-a/repo-a/e${ESC}[2Jvil.gguf"
cp "$L/pub-a/repo-a/alpha.gguf" "$L/loose.gguf"
cp "$L/pub-a/repo-a/alpha.gguf" "$L/pub-b/repo-b/deep/too-deep.gguf"
echo notes >"$L/pub-a/repo-a/README.md"
ln -s .. "$L/pub-a/loop"
printf 'not a model' >"$C/junk.gguf"
mb() { awk -v b="$(wc -c <"$1")" 'BEGIN { printf "%.1f", b / 1e6 }'; }
# logitlab models: every model of every folder that exists (the older
# ~/.cache/lm-studio/models does not), a folder at a time, by name; the name
# -m takes first, whose model it is last, the name escaped.
got=$(HOME="$TMP/home" "$BIN" models)
want=$(cat <<EOF
hf.co/org/Qwen-GGUF:Q8_0	qwen2	F32	$(mb "$MQ") MB	runs	Ollama
qwen:broken	-	-	0.0 MB	no model layer or blob	Ollama
qwen:tiny	qwen2	F32	$(mb "$MQ") MB	runs	Ollama
someone/qwen:q8	qwen2	F32	$(mb "$MQ") MB	runs	Ollama
alpha.gguf	llama	Q8_0	$(mb "$L/pub-a/repo-a/alpha.gguf") MB	runs	LM Studio
beta.gguf	llama	F32	$(mb "$L/pub-b/repo-b/beta.gguf") MB	runs	LM Studio
e\x1B[2Jvil.gguf	llama	Q8_0	$(mb "$L/pub-a/repo-a/alpha.gguf") MB	runs	LM Studio
gamma.gguf	qwen3	F32	$(mb "$C/gamma.gguf") MB	runs	llama.cpp
junk.gguf	-	-	0.0 MB	not a GGUF file logitlab reads	llama.cpp
delta.gguf	llama	Q8_0	$(mb "$D/blobs/0123abcd") MB	runs	llama.cpp -hf
4 models in $O (Ollama's)
3 models in $L (LM Studio's)
2 models in $C (llama.cpp's)
1 model in $HUB (llama.cpp -hf's)
EOF
)
[ "$got" = "$want" ] && ok || bad "logitlab models: [$got], want [$want]"
# -m by a file's name, with or without .gguf, opens that file: its title
# (its seed) and its first row as by its path.
for pair in "alpha $L/pub-a/repo-a/alpha.gguf" "beta.gguf $L/pub-b/repo-b/beta.gguf" \
    "gamma $C/gamma.gguf" "delta.gguf $D/snapshots/c0ffee/delta.gguf"; do
    name=${pair%% *}
    want=$("$BIN" show -m "${pair#* }" -p "Hi" --format json --top 1 | jq -c '[.title, .rows[0].logit]')
    got=$(HOME="$TMP/home" "$BIN" show -m "$name" -p "Hi" --format json --top 1 | jq -c '[.title, .rows[0].logit]')
    [ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "-m $name: $got, want $want"
done
# The variables move the folders: LM Studio's by logitlab's own, llama.cpp's
# (and, with it, the -hf cache) by llama.cpp's; XDG_CACHE_HOME moves both of
# llama.cpp's when LLAMA_CACHE is not set.
got=$(HOME="$TMP/nowhere" LMSTUDIO_MODELS="$L/" LLAMA_CACHE="$C" "$BIN" models | grep -v '^[^	]*	')
want=$(cat <<EOF
3 models in $L (LM Studio's)
2 models in $C (llama.cpp's)
0 models in $C (llama.cpp -hf's)
EOF
)
[ "$got" = "$want" ] && ok || bad "logitlab models with the variables: [$got], want [$want]"
got=$(HOME="$TMP/nowhere" XDG_CACHE_HOME="$TMP/home/.cache" "$BIN" show -m delta -p "Hi" --format json --top 1 | jq -c '.title')
[ "$got" = '"logitlab test llama2 Q8_0 (random weights, seed 8)"' ] && ok || bad "-m delta under XDG_CACHE_HOME: $got"
# The listing stops at 256 models and says so (257 empty files: each is
# listed as no GGUF file, the last is not).
mkdir -p "$TMP/many/p/r"
i=0
while [ $i -lt 257 ]; do
    : >"$TMP/many/p/r/m$i.gguf"
    i=$((i + 1))
done
HOME="$TMP/nowhere" LMSTUDIO_MODELS="$TMP/many" "$BIN" models >"$TMP/out"
[ "$(wc -l <"$TMP/out")" -eq 258 ] && [ "$(tail -n 2 "$TMP/out")" = "256 models in $TMP/many (LM Studio's)
only the first 256 models found are listed" ] && ok || bad "256 models at most: $(tail -n 2 "$TMP/out")"
# A link to a file is that file (one match, listed once); two different
# files of one name are refused, naming both, and listed by their paths.
ln -s "$L/pub-a/repo-a/alpha.gguf" "$C/alpha.gguf"
got=$(HOME="$TMP/home" "$BIN" show -m alpha -p "Hi" --format json --top 1 | jq -c '.title')
[ "$got" = '"logitlab test llama3 Q8_0 (random weights, seed 5)"' ] && ok || bad "-m alpha through a link: $got"
[ "$(HOME="$TMP/home" "$BIN" models | grep -c '^alpha.gguf	')" = 1 ] && ok || bad "a link listed twice"
cp "$L/pub-b/repo-b/beta.gguf" "$C/beta.gguf"
HOME="$TMP/home" expect 2 "logitlab: --model: 'beta' is the name of two files, $L/pub-b/repo-b/beta.gguf and $C/beta.gguf: give the path of one" \
    show --model beta -p hi
got=$(HOME="$TMP/home" "$BIN" models | grep 'beta\.gguf')
want=$(cat <<EOF
$L/pub-b/repo-b/beta.gguf	llama	F32	$(mb "$C/beta.gguf") MB	runs	LM Studio
$C/beta.gguf	llama	F32	$(mb "$C/beta.gguf") MB	runs	llama.cpp
EOF
)
[ "$got" = "$want" ] && ok || bad "two files of one name: [$got], want [$want]"
# With no such folder at all, logitlab models says every folder it looked in.
got=$(HOME="$TMP/nowhere" "$BIN" models)
N="$TMP/nowhere"
[ "$got" = "no models: none of these folders exists: $N/.ollama/models/manifests (Ollama's; OLLAMA_MODELS moves it), $N/.lmstudio/models (LM Studio's; LMSTUDIO_MODELS moves it), $N/.cache/lm-studio/models (LM Studio's; LMSTUDIO_MODELS moves it), $N/.cache/llama.cpp (llama.cpp's; LLAMA_CACHE moves it), $N/.cache/huggingface/hub (llama.cpp -hf's; LLAMA_CACHE moves it)" ] &&
    ok || bad "logitlab models without a folder: $got"
# A name found nowhere names every place looked in (Ollama's tag "latest"
# when none is given); a name ending in .gguf found nowhere is a file that
# is missing; a manifest whose blob is gone says which.
HOME="$TMP/home" expect 2 "logitlab: --model: 'qwen' is no file, nor a model of Ollama's (no $O/manifests/registry.ollama.ai/library/qwen/latest), nor qwen.gguf in $L (LM Studio's; LMSTUDIO_MODELS moves it), $TMP/home/.cache/lm-studio/models (LM Studio's; LMSTUDIO_MODELS moves it), $C (llama.cpp's; LLAMA_CACHE moves it), $HUB (llama.cpp -hf's; LLAMA_CACHE moves it) (\`logitlab models\` lists what they hold)" \
    show --model qwen -p hi
HOME="$TMP/home" expect 2 "logitlab: nowhere.gguf: cannot open: No such file or directory" show -m nowhere.gguf -p hi
rm "$O/blobs/sha256-$H"
HOME="$TMP/home" expect 2 "logitlab: --model: $O/manifests/registry.ollama.ai/library/qwen/tiny names the blob $O/blobs/sha256-$H, which is missing" \
    show --model qwen:tiny -p hi

echo "model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

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
# blob, the same context as the file itself.
O="$TMP/home/.ollama/models"
mkdir -p "$O/manifests/registry.ollama.ai/library/qwen" "$O/blobs"
H=$(sha256sum "$MQ" | cut -d' ' -f1)
cp "$MQ" "$O/blobs/sha256-$H"
printf '{"schemaVersion":2,"config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:%064d","size":485},"layers":[{"digest":"sha256:%s","mediaType":"application/vnd.ollama.image.model","size":1},{"mediaType":"application/vnd.ollama.image.license","digest":"sha256:%064d","size":1}]}' \
    1 "$H" 2 >"$O/manifests/registry.ollama.ai/library/qwen/tiny"
want=$("$BIN" show --model "$MQ" -p "Hi there" --format json --top 1 | jq -c '.context')
got=$(HOME="$TMP/home" OLLAMA_MODELS= "$BIN" show --model qwen:tiny -p "Hi there" --format json --top 1 | jq -c '.context')
[ -n "$want" ] && [ "$got" = "$want" ] && ok || bad "-m qwen:tiny: $got, want $want"
# logitlab models lists it with its architecture, Q weights' type and size, and
# a manifest without a model layer as such; with no Ollama folder it says
# where it looked.
printf '{"layers":[]}' >"$O/manifests/registry.ollama.ai/library/qwen/broken"
size=$(awk -v b="$(wc -c <"$MQ")" 'BEGIN { printf "%.1f", b / 1e6 }')
got=$(HOME="$TMP/home" OLLAMA_MODELS= "$BIN" models | sort)
want=$(printf '2 models in %s (Ollama'"'"'s)\nqwen:broken\t-\t-\t0.0 MB\tno model layer or blob\nqwen:tiny\tqwen2\tF32\t%s MB\truns' "$O" "$size" | sort)
[ "$got" = "$want" ] && ok || bad "logitlab models: [$got], want [$want]"
got=$(HOME="$TMP/nowhere" OLLAMA_MODELS= "$BIN" models)
[ "$got" = "no models: Ollama's folder $TMP/nowhere/.ollama/models/manifests/registry.ollama.ai/library does not exist (OLLAMA_MODELS moves it)" ] &&
    ok || bad "logitlab models without a folder: $got"
# A name with no manifest says where it looked (the tag "latest" when none
# is given); a manifest whose blob is gone says which.
HOME="$TMP/home" OLLAMA_MODELS= expect 2 "logitlab: --model: 'qwen' is no file, nor a model of Ollama's (no $O/manifests/registry.ollama.ai/library/qwen/latest; \`ollama list\` shows its names)" \
    show --model qwen -p hi
rm "$O/blobs/sha256-$H"
HOME="$TMP/home" OLLAMA_MODELS= expect 2 "logitlab: --model: $O/manifests/registry.ollama.ai/library/qwen/tiny names the blob $O/blobs/sha256-$H, which is missing" \
    show --model qwen:tiny -p hi

echo "model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

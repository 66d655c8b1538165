# cli_trained.sh - sourced by tests/cli.sh: the trained model that ships
# (data/stories260K.gguf, made by the build) and the GGUF that llama.cpp's
# converter wrote from the same checkpoint (tests/model/fixtures/), run as a
# user runs them. The numbers are llama2.c run.c's for that checkpoint, and
# the greedy story is llama2.c's doc/stories260K.md.
# shellcheck shell=sh

LLAMACPP_GGUF="$HERE/model/fixtures/stories260K.llamacpp.gguf"
TRAINED_GGUF="$HERE/../data/stories260K.gguf"
LITTLE="Once upon a time, there was a little"
STORY="Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball."

# trained_json FILE JQ WANT: jq's compact answer on FILE is WANT.
trained_json() {
    got=$(jq -c "$2" "$1" 2>&1)
    if [ "$got" = "$3" ]; then ok; else bad "jq '$2': $got, want $3"; fi
}

for gguf in "$LLAMACPP_GGUF" "$TRAINED_GGUF"; do
    if "$BIN" show -m "$gguf" -p "$LITTLE" --format json >"$TMP/tr.json" 2>"$TMP/err" &&
        [ ! -s "$TMP/err" ]; then
        ok
    else
        bad "show -m $gguf: $(cat "$TMP/err")"
    fi
    trained_json "$TMP/tr.json" '.context' '[1,403,407,261,378,432,383,286,261,376]'
    trained_json "$TMP/tr.json" '[.rows[0:2][] | [.token, (.prob * 10000 | round)]]' \
        '[["␣g",6403],["␣b",2754]]'
    # greedy for as many tokens as asked (200, past the 64 steps of a model
    # lesson), no BOS marker, no SentencePiece prefix space
    "$BIN" generate -m "$gguf" -p "Once upon a time" --temperature 0 --max-tokens 200 \
        >"$TMP/story" 2>"$TMP/err"
    case $(head -c "${#STORY}" "$TMP/story") in
    "$STORY") ok ;;
    *) bad "generate -m $gguf: $(head -c 200 "$TMP/story") ($(cat "$TMP/err"))" ;;
    esac
    stop_has "$TMP/story" "generate -m $gguf --max-tokens 200" '^\[200 tokens; stopped by max tokens (200)\]$'
done

# Past the context the KV cache holds: one line, nothing generated.
expect 2 "logitlab: --max-tokens 5000: $TRAINED_GGUF runs a context of 512 tokens and the prompt takes 5: at most 507" \
    generate -m "$TRAINED_GGUF" -p "Once upon a time" --max-tokens 5000

# The trained lessons run from the catalogue, and on another model (-m).
for id in trained-next trained-branch trained-loop trained-flat; do
    expect 0 "" show "$id" --format json
done
"$BIN" show trained-branch --step 2 --format json >"$TMP/tr.json" 2>"$TMP/err"
trained_json "$TMP/tr.json" '[.rows[0:3][] | [.token, (.prob * 1000 | round)]]' \
    '[["o",795],["ir",113],["un",44]]'
expect 0 "" show trained-next -m "$LLAMACPP_GGUF"

# Back onto a step taken before (Left), the lesson pane still explains it:
# the hidden vector and the head as they were at that step (it was empty).
for keys in "<Space><Space><Left>" "<Space><Space><Left><Left>"; do
    "$BIN" -m "$TRAINED_GGUF" -p "Once upon a time" --headless --size 120x40 --keys "$keys" \
        >"$TMP/screen" 2>"$TMP/err"
    stop_has "$TMP/screen" "the lesson pane after $keys" '(taken)' 'Last hidden vector h: 64 values,'
done

# The prefill's saving counted (issue 31; seed 000: the head runs for the
# last position only): "Once upon a time" is 5 tokens with BOS, so 4 x 512
# tokens x 64 values = 131,072 multiply-adds skipped.
"$BIN" -m "$TRAINED_GGUF" -p "Once upon a time" --headless --size 200x60 >"$TMP/screen" 2>"$TMP/err"
stop_has "$TMP/screen" "the prefill's saving" 'skipping 4 x 512 x 64 = 131,072 multiply-adds'

# hidden-size and weights-seed shape the synthetic head; beside [model] file
# they would be ignored, so they are refused with their line (issue 29, part 5).
for key in "hidden-size = 512" "weights-seed = 5"; do
    printf '[lesson]\nid = x\ntitle = X\n[model]\nfile = %s\n%s\n' "$(cd "$HERE/.." && pwd)/data/stories260K.gguf" "$key" >"$TMP/tr.ini"
    expect 2 "logitlab: $TMP/tr.ini:6: [model] file takes its head from the model: drop ${key%% *} (it shapes the synthetic head)" \
        show "$TMP/tr.ini"
done

# A prompt longer than the model's context is named as it was given (issue
# 29, part 6): 60 times "the cat sat on the mat. " is 602 tokens, BOS
# included, and stories260K's context is 512.
LONG=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "the cat sat on the mat. " }')
expect 2 "logitlab: --prompt: 602 tokens, more than the 512 of $TRAINED_GGUF's context" \
    show -m "$TRAINED_GGUF" -p "$LONG"
printf '%s' "$LONG" >"$TMP/long.txt"
expect 2 "logitlab: --prompt-file $TMP/long.txt: 602 tokens, more than the 512 of $TRAINED_GGUF's context" \
    show -m "$TRAINED_GGUF" -f "$TMP/long.txt"

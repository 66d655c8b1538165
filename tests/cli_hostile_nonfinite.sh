# cli_hostile_nonfinite.sh - sourced by tests/cli.sh (issue 12, class 1): a
# setting that takes a z' past the sampler's limit (|z'| <= 1e30) refuses
# the step with one line naming it, in every command and format, and the
# view keeps the old value; before, these printed -nan, drew the last
# token, or died with SIGSEGV in the full-size histogram.
T307="logitlab: temperature 1e-307: token 0's z' / T becomes -4.12e+307, past the sampler's limit |z'| <= 1e+30; the smallest temperature for this step is 1.95e-29 (0 is greedy)"
expect 2 "$T307" show real-france --hidden-size 512 --temperature 1e-307
expect 2 "$T307" show real-france --hidden-size 512 --temperature 1e-307 --draws 1000
expect 2 "$T307" show real-france --hidden-size 512 --temperature 1e-307 --format json
expect 2 "$T307" generate real-france --hidden-size 512 --temperature 1e-307
T303="logitlab: temperature 1e-303: token 0's z' / T overflows, past the sampler's limit |z'| <= 1e+30; the smallest temperature for this step is 1.01e-24 (0 is greedy)"
for fmt in text csv json; do
    expect 2 "$T303" show toy --shift 1e6 --temperature 1e-303 --format "$fmt"
done
expect 2 "$T303" generate toy --shift 1e6 --temperature 1e-303
# The temperature the message names works, and greedy's " Paris" comes first.
if "$BIN" show real-france --hidden-size 512 --temperature 1.95e-29 --format csv >"$TMP/out" 2>"$TMP/err" &&
    sed -n 2p "$TMP/out" | grep -q '^1,[0-9]*,␣Paris,' && ! grep -qi nan "$TMP/out"; then
    ok
else
    bad "show real-france --temperature 1.95e-29: $(cat "$TMP/err") $(sed -n 2p "$TMP/out")"
fi
# The prompt's "The" (id 1, z 0.8) counts with scope all: 0.8 / 1e-300.
expect 2 "logitlab: repetition-penalty 1e-300: token 1's z' becomes 8e+299, past the sampler's limit |z'| <= 1e+30" \
    show toy --repetition-penalty 1e-300 --penalty-scope all
# The view: the value is not applied, the step stays on screen, no crash.
if "$BIN" real-france --hidden-size 512 --headless --size 100x30 \
    --keys ':temperature 1e-307<Enter>' >"$TMP/out" 2>"$TMP/err" &&
    grep -q '(not applied)' "$TMP/out" && grep -q ' T 1 ' "$TMP/out"; then
    ok
else
    bad "view :temperature 1e-307: $(cat "$TMP/err") $(tail -3 "$TMP/out")"
fi
if "$BIN" toy --headless --size 100x30 --keys ':shift 1e6<Enter>:temperature 1e-303<Enter>' \
    >"$TMP/out" 2>"$TMP/err" && grep -q '(not applied)' "$TMP/out" && ! grep -qi 'nan' "$TMP/out"; then
    ok
else
    bad "view :shift 1e6 :temperature 1e-303: $(cat "$TMP/err") $(tail -3 "$TMP/out")"
fi
# A locale whose decimal mark is a comma changes neither what is read nor
# what is printed (main keeps LC_NUMERIC at "C"); run where one is installed.
comma=$(locale -a 2>/dev/null | grep -i -m1 -e '^de_DE\.utf' -e '^fr_FR\.utf' -e '^ru_RU\.utf' || true)
if [ -n "$comma" ]; then
    "$BIN" show toy --temperature 0.5 --format csv >"$TMP/c.csv"
    LC_ALL=$comma "$BIN" show toy --temperature 0.5 --format csv >"$TMP/comma.csv" 2>"$TMP/err"
    cmp -s "$TMP/c.csv" "$TMP/comma.csv" && ok || bad "LC_ALL=$comma changed show's numbers"
fi
# A number that underflows to 0 is refused, not read as 0 (greedy); a
# subnormal one is kept and meets the range rule.
expect 2 "logitlab: --temperature: '1e-400' is too small for a double (it would be 0)" show toy --temperature 1e-400
expect 2 "logitlab: temperature 9.99989e-321: token 0's z' / T overflows, past the sampler's limit |z'| <= 1e+30; the smallest temperature for this step is 3.2e-30 (0 is greedy)" \
    show toy --temperature 1e-320
# A lesson's logit past the limit is refused where it is written.
printf '[lesson]\nid = big\ntitle = Big\n[vocab]\n0 = a\n1 = b\n[step.1]\nlogits = 1 2e30\n' >"$TMP/big.ini"
expect 2 "logitlab: $TMP/big.ini:8: logits: value 2 ('2e30') is past the sampler's limit of 1e30" show "$TMP/big.ini"
# And a captured one (1, 2e35, 3 as float32): the file and the token.
npy "$TMP/big.npy" '<f4' '(3,)' '\000\000\200\077\014\023\032\172\000\000\100\100'
printf 'a\nb\nc\n' >"$TMP/abc3.vocab"
expect 2 "logitlab: $TMP/big.npy: token 1: the logit 2e+35 is past the sampler's limit of 1e30" \
    show --logits "$TMP/big.npy" --vocab "$TMP/abc3.vocab"
# A lesson's own setting that takes z' out of range names its file and line
# (issue 29, part 6): lesson 04's lesson-wide "temperature = 1" (line 23)
# and step 2's "temperature = 0.5" (line 33) set to 1e-30; the toy's -3.2 /
# 1e-30 is -3.2e30. An option that replaces the value is the one to blame:
# no line then, and one that puts a good value back runs the step.
sed 's/^temperature = 1$/temperature = 1e-30/' lessons/04-temperature.ini >"$TMP/t-wide.ini"
sed 's/^temperature = 0.5$/temperature = 1e-30/' lessons/04-temperature.ini >"$TMP/t-step.ini"
T30="temperature 1e-30: token 0's z' / T becomes -3.2e+30, past the sampler's limit |z'| <= 1e+30; the smallest temperature for this step is 3.2e-30 (0 is greedy)"
expect 2 "logitlab: $TMP/t-wide.ini:23: $T30" show "$TMP/t-wide.ini"
expect 2 "logitlab: $TMP/t-wide.ini:23: $T30" generate "$TMP/t-wide.ini"
expect 2 "logitlab: $TMP/t-step.ini:33: $T30" show "$TMP/t-step.ini" --step 2
expect 2 "logitlab: $TMP/t-wide.ini:23: $T30" export "$TMP/t-wide.ini"
expect 2 "logitlab: temperature 1e-31: token 0's z' / T becomes -3.2e+31, past the sampler's limit |z'| <= 1e+30; the smallest temperature for this step is 3.2e-30 (0 is greedy)" \
    show "$TMP/t-wide.ini" --temperature 1e-31
expect 0 "" show "$TMP/t-wide.ini" --temperature 1

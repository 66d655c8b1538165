#!/bin/sh
# listed_but_skipped.sh - tests/gpu/check.sh must fail when nvidia-smi -L lists
# a GPU but the GPU checks skipped for want of a device: here a fake nvidia-smi
# lists one on a machine without a usable GPU. Run by `make test-gpu-self`;
# where a real GPU is listed it says so and passes (check.sh then runs for real).
#
# Usage: tests/gpu/listed_but_skipped.sh   (from the top of the tree)
set -u
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	echo "listed_but_skipped: a real GPU is listed here; not faked"
	exit 0
fi
FAKE=$(mktemp -d)
trap 'rm -rf "$FAKE"' EXIT
cat >"$FAKE/nvidia-smi" <<'SMI'
#!/bin/sh
case "$1" in
-L) echo "GPU 0: NVIDIA H200 (UUID: GPU-00000000-0000-0000-0000-000000000000)" ;;
*) echo "NVIDIA H200, 570.00, 143771 MiB" ;;
esac
SMI
chmod +x "$FAKE/nvidia-smi"
PATH="$FAKE:$PATH" T_BENCH=${T_BENCH:-20} NO_KIT=1 tests/gpu/check.sh >"$FAKE/out" 2>&1
rc=$?
if [ "$rc" -ne 0 ] && grep -q 'nvidia-smi -L lists a GPU' "$FAKE/out" &&
	grep -q 'overall: FAIL' "$FAKE/out"; then
	echo "listed_but_skipped: check.sh with a listed GPU and skipped checks: exit $rc, FAIL (as it must)"
	exit 0
fi
echo "listed_but_skipped: check.sh exited $rc with a listed GPU and no device; its summary:" >&2
tail -n 12 "$FAKE/out" >&2
exit 1

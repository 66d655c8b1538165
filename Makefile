# logitlab - see README.md. The two commands that do all the set-up:
#   make run    install what is missing, build, open the program on its default lesson
#   make test   install what is missing, build, run every test
# Other targets: all (build), bench, bench-peers, test-gpu, test-gpu-self, bench-gpu, gpu-kit, format, format-check, golden, svg, clean.

CC       ?= cc
BUILD    := build
VERSION  := 0.1.0

PKGS     := ncursesw inih check libpcre2-8
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc
WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
DEFS     := -DLOGITLAB_VERSION='"$(VERSION)"'
PKG_CFLAGS = $(shell pkg-config --cflags inih ncursesw libpcre2-8 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs inih ncursesw libpcre2-8 2>/dev/null || echo -linih -lncursesw -lpcre2-8) -pthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt -lpthread)

CFLAGS   ?= -O2 -g
ALL_CFLAGS  = $(CSTD) $(WARN) $(DEFS) $(PKG_CFLAGS) -pthread -MMD -MP $(CFLAGS)
SAN_FLAGS  := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CFLAGS  = $(CSTD) $(WARN) $(DEFS) $(PKG_CFLAGS) -pthread -MMD -MP -O1 -g $(SAN_FLAGS)

# The CUDA toolkit: nvcc on PATH or under /usr/local/cuda. CUDA=auto (the
# default) builds the CUDA backend into the program only on a machine with an
# NVIDIA GPU, because nvcc takes minutes over the six GPU generations and the
# program could not use it anyway; elsewhere `make test` still compiles the
# kernels, as a check. CUDA=1 builds the backend without a GPU (a binary for
# another machine), CUDA=0 leaves CUDA out.
CUDA     ?= auto
ifeq ($(origin NVCC),undefined)
  NVCC := $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
endif
ifeq ($(CUDA),0)
  override NVCC :=
endif
# gpu-kit builds for another machine, the one with the GPU.
ifneq ($(filter gpu-kit,$(MAKECMDGOALS)),)
  ifeq ($(CUDA),auto)
    CUDA := 1
  endif
endif
# A GPU the driver shows: its device nodes, its /proc entries, or WSL2's
# GPU device (where the driver lives on the Windows side).
HAVE_GPU := $(if $(NVCC),$(shell ls -d /dev/nvidia[0-9]* /proc/driver/nvidia/gpus/* /dev/dxg 2>/dev/null | head -n 1))
NVCC_ARCH  := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
              -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 \
              -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
# --fmad=false: the device rounds every product and sum on its own, as gcc
# (ISO C, no contraction) does on the host, so shared arithmetic agrees.
NVCC_FLAGS := -O2 -std=c++17 -cudart static --fmad=false --threads 0 -Werror all-warnings -Xcompiler -Wall,-Wextra $(NVCC_ARCH)
# The static CUDA runtime, where nvcc's own link step finds it (nvcc on PATH
# may be a wrapper script, so its folder says nothing); empty when missing.
CUDA_RT    := $(if $(NVCC),$(shell tools/cuda-runtime.sh $(NVCC)))
# The CUDA backend (gpu/backend_cuda.cu) goes into the plain build with the
# static runtime, so the program runs where no CUDA is installed and says
# why; the sanitizer build leaves it out (the runtime and ASan do not mix).
# Without the runtime library, or without a GPU under CUDA=auto, the program
# is linked without it and `make test` compiles the kernels (CUDA_CHECK).
ifeq ($(NVCC),)
  CUDA_STATE := off
  NOCUDA_WHY := no CUDA backend: built without nvcc
  SAN_NOCUDA_WHY := $(NOCUDA_WHY)
else ifeq ($(CUDA_RT),)
  CUDA_STATE := compile-only
  NOCUDA_WHY := no CUDA backend: nvcc found but not its runtime (libcudart_static.a)
  SAN_NOCUDA_WHY := $(NOCUDA_WHY)
else ifeq ($(CUDA)$(HAVE_GPU),auto)
  CUDA_STATE := no-gpu
  NOCUDA_WHY := no CUDA backend: built on a machine without an NVIDIA GPU (make CUDA=1 builds it)
  SAN_NOCUDA_WHY := $(NOCUDA_WHY)
else
  CUDA_STATE := on
  SAN_NOCUDA_WHY := no CUDA backend in the sanitizer build
endif
ifeq ($(CUDA_STATE),on)
  OBJ_CUDA  := $(BUILD)/gpu/backend_cuda.o
  CUDA_LIBS := -L$(CUDA_RT) -lcudart_static -ldl -lrt -lpthread -lstdc++
  CUDA_CHECK :=
else
  OBJ_CUDA  := $(BUILD)/backend/backend_nocuda.o
  CUDA_LIBS :=
  CUDA_CHECK := $(if $(NVCC),$(BUILD)/gpu/backend_cuda.o)
endif

# The trained model that ships (data/stories260K/, data/README.md): its
# llama2.c checkpoint and tokenizer converted by logitlab's own GGUF writer
# into the file the stories lessons run (git-ignored, installed with data/).
TRAINED  := data/stories260K.gguf

# The program's layers, lowest first (HACKING.md): a file includes headers of
# its own layer and the ones below it only (make lint checks).
LAYERS   := base core model gguf backend data source report tui
SRC_CORE := $(filter-out src/backend/backend_nocuda.c,$(foreach l,$(LAYERS),$(sort $(wildcard src/$(l)/*.c)))) src/cli.c src/cmd_files.c
SRC_MAIN := src/main.c
TESTS    := $(sort $(wildcard tests/check_*.c)) tests/model/tokdata.c tests/llama_ref.c

OBJ_CORE := $(SRC_CORE:src/%.c=$(BUILD)/%.o)
OBJ_MAIN := $(SRC_MAIN:src/%.c=$(BUILD)/%.o)
SAN_CORE := $(SRC_CORE:src/%.c=$(BUILD)/san/%.o) $(BUILD)/san/backend/backend_nocuda.o
SAN_MAIN := $(SRC_MAIN:src/%.c=$(BUILD)/san/%.o)
SAN_TEST := $(TESTS:tests/%.c=$(BUILD)/san/tests/%.o)

BIN      := $(BUILD)/logitlab
SAN_BIN  := $(BUILD)/san/logitlab
TEST_BIN := $(BUILD)/san/check_logitlab
GPU_BINS := $(if $(CUDA_RT),$(patsubst gpu/%.cu,$(BUILD)/gpu/%,$(filter-out gpu/backend_cuda.cu,$(wildcard gpu/*.cu))))
GPU_TEST := $(BUILD)/check_gpu
# Whether this build has CUDA: switching (CUDA=0, nvcc installed) relinks.
CUDA_STAMP := $(BUILD)/cuda-$(CUDA_STATE).stamp

.PHONY: test-model-file
.PHONY: all run test deps build test-build test-unit test-cli test-model test-samplers test-oracle test-oracle-samplers bench-model bench-peers test-gpu test-gpu-self bench bench-gpu gpu-kit fuzz test-fuzz fuzz-cc install uninstall \
	test-install test-make test-valgrind format format-check lint \
        golden clean config svg

# The CUDA checks in gpu/ are built with the program only when it has the
# backend; `make test` builds them (and CUDA_CHECK) in any case.
all: config $(BIN) $(if $(filter on,$(CUDA_STATE)),$(GPU_BINS)) $(TRAINED)

config:
ifeq ($(CUDA_STATE),on)
	@echo "logitlab: nvcc found at $(NVCC), CUDA runtime in $(CUDA_RT): building the CUDA backend and checks in gpu/ (CUDA=0 leaves them out)"
else ifeq ($(CUDA_STATE),compile-only)
	@echo "logitlab: nvcc found at $(NVCC) but not its static runtime (libcudart_static.a): the program is linked without CUDA and uses the CPU backend; make test compiles the kernels as a check"
else ifeq ($(CUDA_STATE),no-gpu)
	@echo "logitlab: nvcc found at $(NVCC) but no NVIDIA GPU on this machine: the CUDA backend is not built (nvcc would take minutes), the CPU backend is used; make test compiles the kernels as a check, make CUDA=1 builds the backend"
else
	@echo "logitlab: no nvcc (PATH, /usr/local/cuda) or CUDA=0: CUDA code not built; the CPU backend is used"
endif

$(CUDA_STAMP):
	@mkdir -p $(BUILD)
	@rm -f $(BUILD)/cuda-*.stamp
	@touch $@

deps:
	@tools/deps.sh

build: deps
	@$(MAKE) --no-print-directory all

run: build
	$(BIN)

# make test builds and tests on TEST_JOBS cores (CI has 2): the test targets
# are independent (each its own temporary files and tmux server), and each
# one's output is printed whole when it ends (--output-sync).
TEST_JOBS ?= 2
test: deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) all test-build $(CUDA_CHECK)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target format-check lint test-unit test-cli test-model test-samplers test-install test-make test-valgrind test-fuzz test-gpu-self test-gpu

# Real models: small GGUF files generated here (the real Llama 3 and Llama 2
# vocabularies, random weights, every weight type), run by logitlab and
# compared with what llama.cpp and the exact reference printed for them
# (tests/golden/model/, written by `make test-oracle`).
test-model: $(SAN_BIN) $(BIN) $(BUILD)/gen_model $(BUILD)/model_check $(BUILD)/san/model_check
	tests/model.sh $(SAN_BIN) $(BUILD)/gen_model $(BUILD)/model_check $(BUILD)/san/model_check
	tests/readme.sh $(BIN) $(BUILD)/models/llama3-q8_0.gguf

# logitlab's stages against llama.cpp's kept sets on the same rows (issue
# 33): the goldens of tests/golden/samplers/, which `make test-oracle-samplers`
# writes from llama.cpp's samplers (tests/oracle/samplers.txt, the cases).
test-samplers: $(BUILD)/san/samplers_check $(SAN_BIN)
	tests/samplers.sh $(BUILD)/san/samplers_check $(SAN_BIN)

# A small test model with random weights and the real Llama 3 vocabulary
# (the one tests/model.sh checks as llama3-q8_0), for trying --model
# without a download: TYPE=Q4_K (any type gen_model takes) for another.
TYPE ?= Q8_0
test-model-file: $(BUILD)/gen_model
	@mkdir -p $(BUILD)/models
	$(BUILD)/gen_model --arch llama3 --layers 2 --embd 256 --heads 4 --kv-heads 2 --ff 512 \
		--tied 1 --rope-scaling llama3 --seed 11 --type $(TYPE) -o $(BUILD)/models/test-$(TYPE).gguf
	@echo "test model: $(BUILD)/models/test-$(TYPE).gguf (random weights: its tokens are noise)"

# llama.cpp as the oracle (fetched from npm, built under build/oracle: about
# 10 minutes the first time) and the exact reference (numpy): regenerates the
# goldens of test-model and compares the three; and llama.cpp's tokenizer tests
# on its vocabulary files (tests/oracle/vocab.sh). Not part of `make test`.
test-oracle: $(BIN) $(BUILD)/gen_model $(BUILD)/samplers_check
	@s=0; tests/oracle/vocab.sh $(BIN) || s=1; tests/oracle/run.sh $(BIN) $(BUILD)/gen_model || s=1; \
	tests/oracle/samplers.sh $(BUILD)/samplers_check || s=1; exit $$s

# The sampler oracle alone: llama.cpp's samplers on the cases of
# tests/oracle/samplers.txt rewrite tests/golden/samplers/, and logitlab's
# stages are checked against them. LLAMA_ORACLE=DIR takes llama.cpp from
# another checkout's build/oracle (read only).
test-oracle-samplers: $(BUILD)/samplers_check
	tests/oracle/samplers.sh $(BUILD)/samplers_check

# A model of Llama 3.2 1B's shapes in Q8_0 and Q4_K_M: prefill and decode
# ms per token, logitlab against llama.cpp's CPU build in the same run.
bench-model: $(BIN) $(BUILD)/gen_model $(BUILD)/bench_llama
	tests/oracle/bench.sh $(BUILD)/bench_llama $(BUILD)/gen_model

# The fast sampler against llama.cpp's on the same rows and chains, in
# interleaved processes pinned to one core (the same llama.cpp build).
bench-peers: $(BUILD)/bench_fast
	tests/bench/peers.sh $(BUILD)/bench_fast

test-build: $(TEST_BIN) $(SAN_BIN)

# Check's timeouts find a test that hangs; make test runs beside other
# targets (TEST_JOBS), so they are four times Check's defaults unless set.
test-unit: $(TEST_BIN) $(TRAINED)
	CK_TIMEOUT_MULTIPLIER=$${CK_TIMEOUT_MULTIPLIER:-4} $(TEST_BIN)

test-cli: $(SAN_BIN) $(BIN) $(TRAINED)
	tests/cli.sh $(SAN_BIN)
	tests/screens.sh $(SAN_BIN)
	tests/svg.sh $(SAN_BIN)
	tests/tmux.sh $(SAN_BIN)
	tests/tmux.sh $(BIN)
	tests/exercise_tmux.sh $(SAN_BIN)
	tests/exercise_tmux.sh $(BIN)
	tests/draws_tmux.sh $(SAN_BIN)
	tests/draws_tmux.sh $(BIN)
	tests/batch_toy_tmux.sh $(SAN_BIN)
	tests/batch_toy_tmux.sh $(BIN)
	tests/legend_tmux.sh $(SAN_BIN)
	tests/legend_tmux.sh $(BIN)
	tests/headbuild_tmux.sh $(SAN_BIN)
	tests/headbuild_tmux.sh $(BIN)
	tests/big_tmux.sh $(SAN_BIN)
	tests/big_tmux.sh $(BIN)
	tests/read_tmux.sh $(SAN_BIN)
	tests/read_tmux.sh $(BIN)
	tests/backend.sh $(SAN_BIN)
	tests/backend.sh $(BIN)

golden: $(SAN_BIN)
	GOLDEN_UPDATE=1 tests/cli.sh $(SAN_BIN)
	GOLDEN_UPDATE=1 tests/screens.sh $(SAN_BIN)
	@git diff --stat -- tests/golden || true

# GPU against CPU (tests/gpu/check_gpu.c); without a device or without nvcc
# it says why it skipped and passes. tests/gpu/check.sh runs it on a GPU.
test-gpu: $(GPU_BINS) $(GPU_TEST)
	@for b in $(GPU_BINS); do $$b || exit 1; done
	$(GPU_TEST)

# The same checker with the kernels' design run on the CPU in the device's
# place (src/backend/backend_spec.c), so that it and the design are exercised
# on every machine (part of make test): it must pass, and with four known
# faults in that backend it must catch each one.
test-gpu-self: $(GPU_TEST)
	$(GPU_TEST) --self --quick
	@echo "$(GPU_TEST) --self --fault --quick (its failures are expected; the log is $(BUILD)/check_gpu-fault.log)"
	@$(GPU_TEST) --self --fault --quick >$(BUILD)/check_gpu-fault.log || \
	  { cat $(BUILD)/check_gpu-fault.log; exit 1; }
	@tail -n 1 $(BUILD)/check_gpu-fault.log
	tests/gpu/listed_but_skipped.sh

$(GPU_TEST): tests/gpu/check_gpu.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm

bench-gpu: $(BUILD)/bench_gpu
	@$(BUILD)/bench_gpu

# The GPU checks prebuilt for a GPU machine that lacks this build's Debian
# packages (a lent device machine reaches no package registry, and its
# minutes are better spent checking than compiling): check_gpu, bench_gpu and
# the checks of gpu/, with inih and ncurses linked in statically (they then
# need only glibc 2.34 or later and libstdc++, which every CUDA image has),
# and the hash of their sources (tests/gpu/kit-sources.sh).
# tests/gpu/check.sh takes them from build/gpu-kit/ when they are there.
KIT      := $(BUILD)/gpu-kit
KIT_LIBS  = -Wl,-Bstatic -linih -lncursesw -ltinfo -lpcre2-8 -Wl,-Bdynamic -lstdc++ -pthread \
            -L$(CUDA_RT) -lcudart_static -ldl -lrt -lm

ifneq ($(filter gpu-kit,$(MAKECMDGOALS)),)
ifneq ($(CUDA_STATE),on)
$(error gpu-kit: needs nvcc and its static runtime: $(NOCUDA_WHY))
endif
endif
gpu-kit: $(KIT)/check_gpu $(KIT)/bench_gpu $(GPU_BINS)
	@cp $(GPU_BINS) $(KIT)/
	@rm -f $(KIT)/*.d
	@tests/gpu/kit-sources.sh >$(KIT)/SOURCES
	@{ echo "built $$(date -u '+%Y-%m-%d %H:%M UTC') on $$(uname -n) with $$($(NVCC) --version | tail -n 1)"; \
	   echo "logitlab: nvcc found at $(NVCC), CUDA runtime in $(CUDA_RT): the CUDA backend is in these checks"; } >$(KIT)/BUILD
	@echo "gpu-kit: $(KIT)/ ($$(du -sh $(KIT) | cut -f1)): $$(cd $(KIT) && ls | tr '\n' ' ')"

$(KIT)/%: tests/gpu/%.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@mkdir -p $(@D)
	@echo "  LD KIT  $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(KIT_LIBS)

$(KIT)/%: tests/bench/%.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@mkdir -p $(@D)
	@echo "  LD KIT  $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(KIT_LIBS)

$(BUILD)/llama2c_gguf: tools/llama2c_gguf.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm

$(TRAINED): data/stories260K/stories260K.bin data/stories260K/tok512.bin $(BUILD)/llama2c_gguf
	@echo "  GGUF    $@"
	@$(BUILD)/llama2c_gguf data/stories260K/stories260K.bin data/stories260K/tok512.bin stories260K $@

# The tests' generator of small GGUF models (random weights, the real
# Llama 3 or Llama 2 vocabulary), and the model benchmark's timing program.
$(BUILD)/gen_model: tests/model/gen_model.c tests/model/tokdata.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -Itests -o $@ tests/model/gen_model.c tests/model/tokdata.c $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm

# The check of logitlab's real-model path against the goldens (tests/model.sh):
# the plain build for every model, the sanitizer build for some.
$(BUILD)/model_check: tests/model/model_check.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm
$(BUILD)/san/model_check: tests/model/model_check.c $(SAN_CORE)
	@echo "  LD SAN  $@"
	@$(CC) $(SAN_CFLAGS) -Isrc -o $@ $^ $(PKG_LIBS) -lm

# The check of logitlab's stages against llama.cpp's kept sets
# (tests/oracle/samplers_check.c, goldens in tests/golden/samplers/), and its
# sanitizer build, which make test runs.
$(BUILD)/samplers_check: tests/oracle/samplers_check.c tests/oracle/sampler_rows.h $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -Itests/oracle -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm
$(BUILD)/san/samplers_check: tests/oracle/samplers_check.c tests/oracle/sampler_rows.h $(SAN_CORE)
	@echo "  LD SAN  $@"
	@$(CC) $(SAN_CFLAGS) -Isrc -Itests/oracle -o $@ $< $(SAN_CORE) $(PKG_LIBS) -lm

# The tokenizer's benchmark builds the real Llama 3 vocabulary as the tests
# do (tests/model/tokdata.c).
$(BUILD)/bench_tokenizer: tests/bench/bench_tokenizer.c tests/model/tokdata.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -Itests -o $@ tests/bench/bench_tokenizer.c tests/model/tokdata.c $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm

# The benchmarks, each compiled and linked in one step with the core.
$(BUILD)/bench_%: tests/bench/bench_%.c $(OBJ_CORE) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(ALL_CFLAGS) -Isrc -o $@ $< $(OBJ_CORE) $(OBJ_CUDA) $(PKG_LIBS) $(CUDA_LIBS) -lm

$(BIN): $(OBJ_CORE) $(OBJ_MAIN) $(OBJ_CUDA) $(CUDA_STAMP)
	@echo "  LD      $@"
	@$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) $(PKG_LIBS) $(CUDA_LIBS) -lm

$(SAN_BIN): $(SAN_CORE) $(SAN_MAIN)
	@echo "  LD SAN  $@"
	@$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) -lm

$(TEST_BIN): $(SAN_CORE) $(SAN_TEST)
	@echo "  LD SAN  $@"
	@$(CC) $(SAN_FLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS) -lm

# The dense loops of the sampler: vectorized, for the CPU found at load time.
# -fno-trapping-math only lets the compiler turn comparisons into selects.
VEC_CFLAGS := -O3 -fno-trapping-math
VEC_OBJ := core/vecmath.o core/fast_vec.o model/head_vec.o model/quant.o model/llama.o
$(VEC_OBJ:%=$(BUILD)/%): CFLAGS += $(VEC_CFLAGS)
$(VEC_OBJ:%=$(BUILD)/san/%): SAN_EXTRA := $(VEC_CFLAGS)

$(BUILD)/%.o: src/%.c
	@mkdir -p $(@D)
	@echo "  CC      $@"
	@$(CC) $(ALL_CFLAGS) $(PLAIN_EXTRA) -c -o $@ $<

$(BUILD)/backend/backend_nocuda.o: PLAIN_EXTRA := -DLOGITLAB_NO_CUDA_WHY='"$(NOCUDA_WHY)"'
$(BUILD)/backend/backend_nocuda.o: $(CUDA_STAMP)
$(BUILD)/san/backend/backend_nocuda.o: SAN_EXTRA := -DLOGITLAB_NO_CUDA_WHY='"$(SAN_NOCUDA_WHY)"'
$(BUILD)/san/backend/backend_nocuda.o: $(CUDA_STAMP)

$(BUILD)/san/%.o: src/%.c
	@mkdir -p $(@D)
	@echo "  CC SAN  $@"
	@$(CC) $(SAN_CFLAGS) $(SAN_EXTRA) -c -o $@ $<

$(BUILD)/san/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	@echo "  CC SAN  $@"
	@$(CC) $(SAN_CFLAGS) -Isrc -Itests $(shell pkg-config --cflags check 2>/dev/null) -c -o $@ $<

# Each nvcc keeps its temporaries (TMPDIR) in a directory of its own in the
# build, where nothing else can touch them: one CI run lost a device-link
# temporary in the shared /tmp.
NVCC_TMP = $(BUILD)/nvcc-tmp/$(notdir $@)

$(BUILD)/gpu/backend_cuda.o: gpu/backend_cuda.cu $(wildcard gpu/*.cuh) $(wildcard src/*/*.h src/*/*.def)
	@mkdir -p $(@D)
	@echo "  NVCC    $@"
	@rm -rf $(NVCC_TMP) && mkdir -p $(NVCC_TMP)
	@TMPDIR=$(abspath $(NVCC_TMP)) $(NVCC) $(NVCC_FLAGS) -Isrc -c -o $@ $<
	@rm -rf $(NVCC_TMP)

$(BUILD)/gpu/%: gpu/%.cu src/core/philox.h tests/philox_kat.h
	@mkdir -p $(@D)
	@echo "  NVCC    $@"
	@rm -rf $(NVCC_TMP) && mkdir -p $(NVCC_TMP)
	@TMPDIR=$(abspath $(NVCC_TMP)) $(NVCC) $(NVCC_FLAGS) -Isrc -Itests -o $@ $<
	@rm -rf $(NVCC_TMP)

bench: $(BUILD)/bench_ui $(BUILD)/bench_sampler $(BUILD)/bench_fast $(BUILD)/bench_model $(BUILD)/bench_tokenizer \
	$(BUILD)/bench_grammar
	@$(BUILD)/bench_sampler
	@echo
	@$(BUILD)/bench_fast
	@echo
	@$(BUILD)/bench_model
	@echo
	@$(BUILD)/bench_ui
	@echo
	@$(BUILD)/bench_tokenizer
	@echo
	@$(BUILD)/bench_grammar

# Installing: PREFIX/bin/logitlab, PREFIX/share/logitlab/{lessons,data}, the man page.
# The program finds its lessons from its own location, so any PREFIX works.
PREFIX  ?= /usr/local
DESTDIR ?=
SHARE    = $(DESTDIR)$(PREFIX)/share/logitlab
MAN1     = $(DESTDIR)$(PREFIX)/share/man/man1

install: $(BIN) $(TRAINED)
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE)/lessons $(SHARE)/data/scenarios $(MAN1)
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/logitlab
	install -m 644 lessons/*.ini $(SHARE)/lessons/
	install -m 644 data/llama3-vocab.bin data/README.md $(TRAINED) $(SHARE)/data/
	install -d $(SHARE)/data/stories260K
	install -m 644 data/stories260K/LICENSE $(SHARE)/data/stories260K/
	install -m 644 data/scenarios/*.ini $(SHARE)/data/scenarios/
	install -m 644 doc/logitlab.1 $(MAN1)/logitlab.1
	@echo "installed logitlab in $(DESTDIR)$(PREFIX) (lessons and data in $(SHARE))"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/logitlab $(MAN1)/logitlab.1
	rm -rf $(SHARE)
	@echo "removed logitlab from $(DESTDIR)$(PREFIX)"

test-install: $(BIN)
	tests/install.sh

# The Makefile's own rules: where the CUDA backend is built (a fake nvcc).
test-make:
	tests/cuda_build.sh

test-valgrind: $(BIN)
	@tools/deps.sh valgrind
	tests/valgrind.sh $(BIN)

# README's pictures (doc/pictures/), drawn by the program itself at 120x40.
SVG_VIEW = LC_ALL=C.UTF-8 $(BIN) --no-config --lessons-dir lessons --backend cpu --theme default \
           --headless --format svg --size 120x40
svg: $(BIN)
	@mkdir -p doc/pictures
	$(SVG_VIEW) toy >doc/pictures/toy.svg.tmp
	$(SVG_VIEW) top-p --keys u >doc/pictures/top-p.svg.tmp
	$(SVG_VIEW) real-story --hidden-size 512 --keys D >doc/pictures/real-story-draws.svg.tmp
	@for f in toy top-p real-story-draws; do mv doc/pictures/$$f.svg.tmp doc/pictures/$$f.svg; done

# Fuzzing (libFuzzer, clang): every tests/fuzz/fuzz_NAME.c is a harness.
# The program's sources are compiled once, instrumented for coverage and
# the sanitizers, and every harness links the same objects. make fuzz runs
# each for FUZZ_TIME seconds (FUZZ_RUNS=N: until N executions instead);
# make test runs each briefly on its seeds (test-fuzz), so that a harness
# that stops building or finds something fails CI.
FUZZ_TIME ?= 60
FUZZ_CC   ?= clang
FUZZERS   := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_SRC  := $(SRC_CORE) src/backend/backend_nocuda.c
FUZZ_OBJ  := $(FUZZ_SRC:src/%.c=$(BUILD)/fuzz/obj/%.o)
FUZZ_BIN  := $(FUZZERS:%=$(BUILD)/fuzz/fuzz_%)
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS = $(CSTD) $(DEFS) -g -O1 $(FUZZ_SAN) $(PKG_CFLAGS) -pthread -MMD -MP

fuzz: $(FUZZ_BIN)
	FUZZ_TIME=$(FUZZ_TIME) FUZZ_RUNS=$(FUZZ_RUNS) tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZERS)

test-fuzz: $(FUZZ_BIN)
	FUZZ_BRIEF=1 tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZERS)

# Drawing (the screen, the view's panes, character widths) and the numeric
# kernels (the forward pass, the block products, the fused passes) are most
# of the time of the harnesses that draw or run a model, and their
# comparisons (loop bounds, widths) guide no input: they keep their coverage
# counters and sanitizers but not libFuzzer's comparison tracing, which
# doubles or triples those harnesses' executions a second.
FUZZ_NOCMP := $(filter src/tui/screen.c src/tui/view%.c src/base/utf8.c src/model/quant%.c \
	src/model/head_vec.c src/model/llama.c src/model/pool.c src/core/fast_%.c src/core/draws.c \
	src/core/vecmath.c,$(FUZZ_SRC))
$(FUZZ_NOCMP:src/%.c=$(BUILD)/fuzz/obj/%.o): FUZZ_COV = -fno-sanitize-coverage=trace-cmp

$(FUZZ_OBJ): $(BUILD)/fuzz/obj/%.o: src/%.c | fuzz-cc
	@mkdir -p $(dir $@)
	@echo "  CC FUZZ $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link $(FUZZ_COV) -c -o $@ $<

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ) | fuzz-cc
	@echo "  FUZZ    $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(PKG_LIBS) -lm

# clang, installed when missing (tools/deps.sh), before the first object,
# and its runtimes (libFuzzer's and the sanitizers'), which Debian puts in
# libclang-rt-N-dev, only recommended by clang-N (deps.sh installs no
# recommended packages).
fuzz-cc:
	@tools/deps.sh clang
	@tools/deps.sh libclang-rt-$$($(FUZZ_CC) -dumpversion | cut -d. -f1)-dev

FORMAT_FILES = $(wildcard src/*.c src/*.h src/*/*.c src/*/*.h tests/*.c tests/*.h tests/gpu/*.c tests/bench/*.c tests/bench/*.h tests/fuzz/*.c) tests/oracle/samplers_check.c tests/oracle/sampler_rows.h

format:
	clang-format -i $(FORMAT_FILES)

# The rules of the house a compiler does not check (tests/lint.sh): layers,
# where ncurses and CUDA may be included, no hidden mutable state, short
# functions and files; tests/lint-self.sh shows it catches each kind.
lint:
	@tests/lint.sh
	@tests/lint-self.sh

format-check:
	@if command -v clang-format >/dev/null 2>&1; then \
	  clang-format --dry-run -Werror $(FORMAT_FILES) && echo "format-check: clean"; \
	else echo "format-check: skipped: clang-format is not installed"; fi

clean:
	rm -rf $(BUILD)

-include $(OBJ_CORE:.o=.d) $(OBJ_MAIN:.o=.d) $(SAN_CORE:.o=.d) $(SAN_MAIN:.o=.d) $(SAN_TEST:.o=.d) \
	$(OBJ_CUDA:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_BIN:=.d)
# The programs compiled and linked in one step (check_gpu, the benchmarks).
-include $(wildcard $(BUILD)/*.d)

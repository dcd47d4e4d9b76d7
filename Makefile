# streaminfer — see README.md. `make deps` once (root), then `make`, `make test`, `make demo`.
CC      ?= cc
OPT     ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) -Wall -Wextra -Werror -Iinclude
STB_A   ?= $(firstword $(wildcard /usr/lib/*/libstb.a) /usr/lib/x86_64-linux-gnu/libstb.a)
# The library compiles stb_image itself (io/image.c); libstb's archive is for
# the tests' stb_image_write, linked statically: the GPU machine has no libstb.
LIBS    = -lepoxy -lcjson -luring $(STB_A) -lm -lpthread
TESTLIBS = -lcmocka

B       = build
LIB_SRC = $(wildcard base/*.c core/*.c io/*.c pager/*.c glkernels/*.c runtime/*.c)
LIB_OBJ = $(patsubst %.c,$(B)/%.o,$(LIB_SRC)) $(B)/glkernels/shaders_gen.o
SHADERS = $(sort $(wildcard glkernels/shaders/*.comp))
HDRS    = $(wildcard include/*.h base/*.h core/*.h io/*.h pager/*.h glkernels/*.h runtime/*.h)
TESTS   = $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c))
CACHE  ?= $(CURDIR)/.cache

.PHONY: all deps test demo clean models-table bench tests kiosk-bench
all: $(B)/streaminfer $(B)/libstreaminfer.a
tests: $(TESTS)

deps:
	./tools/deps.sh

$(B)/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The plan cache's keys name the sources that make plans: an entry written by
# another build of them is another key (runtime/plancache.c, SI_PLAN_SOURCES)
PLAN_SOURCES = $(sort $(wildcard base/*.c core/*.c pager/*.c runtime/*.c base/*.h core/*.h pager/*.h runtime/*.h))
PLAN_ID = -DSI_PLAN_SOURCES='"'"$$(cat $(PLAN_SOURCES) | cksum | tr ' ' -)"'"'
$(B)/runtime/plancache.o: runtime/plancache.c $(HDRS) $(PLAN_SOURCES)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(PLAN_ID) -c $< -o $@
$(B)/pic/runtime/plancache.o: runtime/plancache.c $(HDRS) $(PLAN_SOURCES)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC $(PLAN_ID) -c $< -o $@

$(B)/glkernels/shaders_gen.c: $(SHADERS) tools/embed_shaders.sh
	@mkdir -p $(dir $@)
	./tools/embed_shaders.sh $@ $(SHADERS)

$(B)/glkernels/shaders_gen.o: $(B)/glkernels/shaders_gen.c
	$(CC) $(CFLAGS) -c $< -o $@

$(B)/libstreaminfer.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

CLI_OBJ = $(patsubst %.c,$(B)/%.o,$(wildcard cli/*.c))
$(CLI_OBJ): cli/cli.h
$(B)/streaminfer: $(CLI_OBJ) $(B)/libstreaminfer.a
	$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(B)/tests/%: tests/%.c $(B)/libstreaminfer.a $(wildcard tests/*.h) $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Icore -Iio -Iglkernels -Ipager $< $(B)/libstreaminfer.a $(LIBS) $(TESTLIBS) -o $@

test: all $(TESTS) $(B)/bench/kiosk $(B)/bench/kiosk_pipeline
	./tests/run_all.sh $(B) $(CACHE)

demo: all
	./tools/demo.sh $(B) $(CACHE)

clean:
	rm -rf $(B) $(ASAN_B) $(FUZZ_B)

# ---- sanitizers and fuzzing (issue 12) --------------------------------------
# Each has its own build folder, built by this Makefile again with clang and
# the sanitizers in OPT (OPT reaches every compile and link line).
SAN_CC   ?= clang-14
SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
ASAN_B   ?= build-asan
FUZZ_B   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = model_json model npy image
FUZZ_BINS = $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_TARGETS)) $(B)/fuzz/make_seeds
.PHONY: asan-build test-asan fuzz-build fuzz fuzz-bins

# every unit test and the CLI under ASan+UBSan; tests/asan_run.sh runs them
asan-build:
	$(MAKE) B=$(ASAN_B) CC=$(SAN_CC) OPT="-O1 -g $(SAN)" all tests

test-asan: asan-build
	./tests/asan_run.sh $(ASAN_B) $(CACHE)

# the library with coverage for libFuzzer; the targets link its main
fuzz-build:
	$(MAKE) B=$(FUZZ_B) CC=$(SAN_CC) OPT="-O1 -g $(SAN) -fsanitize=fuzzer-no-link -DIO_IMAGE_MAX_SIDE=1024" fuzz-bins

fuzz-bins: $(FUZZ_BINS)

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(B)/libstreaminfer.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -Icore -Iio $< $(B)/libstreaminfer.a $(LIBS) -o $@

$(B)/fuzz/make_seeds: tests/fuzz/make_seeds.c $(B)/libstreaminfer.a $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Icore -Iio $< $(B)/libstreaminfer.a $(LIBS) -o $@

# FUZZ_SECONDS a target; fails on any crash, leak, timeout (10 s an input) or
# OOM (2 GB); findings land in $(FUZZ_B)/crashes
fuzz: fuzz-build
	./tests/fuzz/run.sh $(FUZZ_B) $(CACHE) $(FUZZ_SECONDS)

$(B)/bench/hold_context: bench/hold_context.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iglkernels -Icore -Iio $< $(B)/libstreaminfer.a $(LIBS) -o $@

$(B)/bench/half_convert: bench/half_convert.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iio $< $(B)/libstreaminfer.a $(LIBS) -o $@

$(B)/bench/digest_speed: bench/digest_speed.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(B)/libstreaminfer.a $(LIBS) -o $@

bench: all $(B)/bench/hold_context $(B)/bench/kiosk $(B)/bench/kiosk_pipeline $(B)/bench/half_convert \
       $(B)/bench/digest_speed $(B)/bench/overlap_steps $(B)/bench/transfer_io $(B)/bench/dispatch_cost

# issue 19: does a transfer kernel run beside the step dispatched after it (bench/results/stream-h200.md)
$(B)/bench/overlap_steps: bench/overlap_steps.c bench/gl_probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -lepoxy -o $@

# issue 17: what each part of a step costs the GPU (bench/results/speed-h200.md)
$(B)/bench/dispatch_cost: bench/dispatch_cost.c bench/gl_probe.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -lepoxy -o $@

# issue 17: what a run's input upload and output download cost, by path (bench/results/speed-h200.md)
$(B)/bench/transfer_io: bench/transfer_io.c bench/gl_probe.h $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(B)/libstreaminfer.a $(LIBS) -o $@

$(B)/bench/kiosk_pipeline: bench/kiosk_pipeline.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(B)/libstreaminfer.a $(LIBS) -lm -o $@

# issue 21: the five-model pipeline in one budget (bench/results/kiosk.md)
KIOSK_FRAMES ?= 1000
kiosk-bench: $(B)/bench/kiosk_pipeline
	./$(B)/bench/kiosk_pipeline $(CACHE)/human-models/models $(KIOSK_FRAMES)

$(B)/bench/kiosk: bench/kiosk.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(B)/libstreaminfer.a $(LIBS) -o $@

models-table: all $(TESTS) $(B)/bench/hold_context
	./tests/fetch_models.sh $(CACHE)
	./tests/model_table.sh $(B) $(CACHE) > tests/MODELS.md
	tail -1 tests/MODELS.md

# Synthetic large models (issue 5): EfficientDet D0-D7 and frcnn-irv2, seeded
# random weights, tensorflowjs_converter format, into a git-ignored cache; and
# effdet-d0-od ... effdet-d7-od (issue 16): the same EfficientDets with the TF2
# OD API's post-processing (per-class NMS in a while loop), their weights taken
# from the plain ones; frcnn-irv2-od and frcnn-irv2-od-1024: frcnn-irv2 as a TF1
# OD API export (proposals, CropAndResize, second stage at batch 300, NMS).
BIG ?= .cache/big
models:
	node bench/gen/gen.js all $(BIG)
.PHONY: models

# ---- install (issue 23): static and shared library, header, pkg-config, man page
PREFIX  ?= /usr/local
DESTDIR ?=
VERSION  = $(shell sed -n 's/^\#define SI_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)/\2/p' include/streaminfer.h | paste -sd.)
SOMAJOR  = $(firstword $(subst ., ,$(VERSION)))
LIBDIR   = $(PREFIX)/lib
PIC_OBJ  = $(patsubst $(B)/%.o,$(B)/pic/%.o,$(LIB_OBJ))
SO       = $(B)/libstreaminfer.so.$(VERSION)
SO_LIBS  = -lepoxy -lcjson -luring -lm -lpthread

$(B)/pic/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(B)/pic/glkernels/shaders_gen.o: $(B)/glkernels/shaders_gen.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -c $< -o $@

$(SO): $(PIC_OBJ)
	$(CC) -shared -Wl,-soname,libstreaminfer.so.$(SOMAJOR) -Wl,--no-undefined $^ $(SO_LIBS) -o $@

# made every time: it holds PREFIX
$(B)/streaminfer.pc: tools/streaminfer.pc.in include/streaminfer.h FORCE
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@VERSION@|$(VERSION)|' $< > $@

install: all $(SO) $(B)/streaminfer.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include \
	    $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/streaminfer $(DESTDIR)$(PREFIX)/bin/streaminfer
	install -m 644 $(B)/libstreaminfer.a $(DESTDIR)$(LIBDIR)/libstreaminfer.a
	install -m 755 $(SO) $(DESTDIR)$(LIBDIR)/libstreaminfer.so.$(VERSION)
	ln -sf libstreaminfer.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libstreaminfer.so.$(SOMAJOR)
	ln -sf libstreaminfer.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libstreaminfer.so
	install -m 644 include/streaminfer.h $(DESTDIR)$(PREFIX)/include/streaminfer.h
	install -m 644 $(B)/streaminfer.pc $(DESTDIR)$(LIBDIR)/pkgconfig/streaminfer.pc
	install -m 644 docs/streaminfer.1 $(DESTDIR)$(PREFIX)/share/man/man1/streaminfer.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/streaminfer $(DESTDIR)$(LIBDIR)/libstreaminfer.a \
	    $(DESTDIR)$(LIBDIR)/libstreaminfer.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libstreaminfer.so.$(SOMAJOR) \
	    $(DESTDIR)$(LIBDIR)/libstreaminfer.so $(DESTDIR)$(PREFIX)/include/streaminfer.h \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/streaminfer.pc $(DESTDIR)$(PREFIX)/share/man/man1/streaminfer.1
FORCE:
.PHONY: install uninstall FORCE

# ---- Node.js binding (issue 24): the addon, from the PIC objects, against the
# headers of the Node that runs it (Debian: libnode-dev, or nodejs itself)
NODE     ?= node
NODE_INC ?= $(firstword $(wildcard $(shell $(NODE) -p "require('path').resolve(process.execPath, '../../include/node')" 2>/dev/null) /usr/include/node /usr/local/include/node))
NODE_ADDON = bindings/node/build/streaminfer.node

node: $(NODE_ADDON)

$(NODE_ADDON): bindings/node/src/addon.c $(PIC_OBJ) include/streaminfer.h
	@[ -f "$(NODE_INC)/node_api.h" ] || { echo "make node: no node_api.h found (make deps, or NODE_INC=DIR)" >&2; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -isystem $(NODE_INC) -DNODE_GYP_MODULE_NAME=streaminfer -shared $< \
	    $(PIC_OBJ) $(SO_LIBS) -o $@.tmp
	mv -f $@.tmp $@ # a new file: processes that have the old one loaded keep theirs
.PHONY: node

$(B)/bench/c_runs: bindings/node/bench/c_runs.c $(B)/libstreaminfer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< $(B)/libstreaminfer.a $(LIBS) -o $@

# the binding against the C library and TensorFlow.js: bench/results/node.md
node-bench: node $(B)/bench/c_runs $(B)/bench/hold_context
	node bindings/node/bench.js --c $(B)/bench/c_runs --hold $(B)/bench/hold_context \
	    --models $(CACHE)/human-models/models
.PHONY: node-bench

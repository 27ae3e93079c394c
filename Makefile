# The README's two commands: `make run` and `make test`. Both set up a fresh machine.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS  ?= $(shell nproc)
EXPERIMENT ?= configs/experiments/imx8mp-xdp-tx.json
PREFIX ?= /usr/local

.PHONY: deps configure build fecsim everything run table test bench install costs plots fuzz sanitize clean

deps:
	@scripts/install-deps.sh

# A build directory configured for another tree (this one copied or moved) is started afresh:
# CMake refuses a cache made for a different source directory.
configure: deps
	@if [ -f $(BUILD)/CMakeCache.txt ] && \
	    ! grep -qxF 'CMAKE_HOME_DIRECTORY:INTERNAL=$(CURDIR)' $(BUILD)/CMakeCache.txt; then \
	  echo "fecsim: $(BUILD) was configured for another source tree; building it afresh"; rm -rf $(BUILD); fi
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

# The tool alone; `make test` and `make bench` build what they need.
build fecsim: configure
	@cmake --build $(BUILD) -j $(JOBS) --target fecsim

everything: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/run-headline.sh $(BUILD)/fecsim $(EXPERIMENT)

# Every published row (calibration and prediction): a few minutes.
table: build
	@scripts/run-headline.sh $(BUILD)/fecsim all

test: everything
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Medians of 5 repetitions (the host is shared and noisy): docs/performance.md.
bench: configure
	@cmake --build $(BUILD) -j $(JOBS) --target fecsim_bench
	@$(BUILD)/bench/fecsim_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true $(BENCH_ARGS)

# PREFIX/bin/fecsim, PREFIX/share/fecsim/configs (found relative to the binary), PREFIX/share/doc/fecsim.
install: build
	@cmake --install $(BUILD) --prefix $(PREFIX) >/dev/null
	@echo "fecsim installed in $(PREFIX)/bin"

# Re-measure configs/costs/linux-6.1-*.json from Debian's kernel debug packages (downloads
# ~1.4 GB once into ~/.cache/fecsim-kernel; not part of the build or CI).
costs:
	@scripts/kernel-costs.py

# The README's images (docs/images/): the two sweeps of configs/sweeps/ and the published table.
PLOTS := $(BUILD)/plots
plots: build
	@mkdir -p docs/images
	@for s in e1-frame-size e1-rx-ring; do \
	  $(BUILD)/fecsim sweep configs/sweeps/$$s.json --out $(PLOTS)/$$s --jobs $(JOBS) >/dev/null && \
	  $(BUILD)/fecsim collect $(PLOTS)/$$s >/dev/null || exit 1; done
	@scripts/plot.py sweep $(PLOTS)/e1-frame-size --x generator.pktgen --out docs/images/e1-frame-size \
	  --title "E1 xdp2 XDP_TX on i.MX8MP: frame size (20 ms windows)"
	@scripts/plot.py sweep $(PLOTS)/e1-rx-ring --x driver.rx_ring_size --out docs/images/e1-rx-ring \
	  --title "E1 xdp2 XDP_TX on i.MX8MP: RX ring size (20 ms windows)"
	@scripts/run-headline.sh $(BUILD)/fecsim all > $(PLOTS)/table.txt
	@scripts/plot.py table $(PLOTS)/table.txt --out docs/images/table

# Every test under UndefinedBehaviorSanitizer and AddressSanitizer (docs/reliability.md).
SAN_BUILD ?= build-san
sanitize: deps
	@cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Sanitize >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	@scripts/sanitize-tests.sh $(SAN_BUILD) $(JOBS)

# libFuzzer harnesses (fuzz/, clang with ASan + UBSan), FUZZ_SECONDS each.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
fuzz: deps
	@CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFECSIM_FUZZ=ON \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link" >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_config fuzz_pktgen fuzz_pcap fuzz_fec
	@scripts/fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	@rm -rf $(BUILD)

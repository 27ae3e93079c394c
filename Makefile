# The README's two commands: `make run` and `make test`. Both set up a fresh machine.
BUILD ?= build
MAKEFLAGS += --no-print-directory
JOBS  ?= $(shell nproc)
EXPERIMENT ?= configs/experiments/imx8mp-xdp-tx.json

.PHONY: deps configure build run table test bench clean

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/run-headline.sh $(BUILD)/fecsim $(EXPERIMENT)

# Every published row (calibration and prediction): a few minutes.
table: build
	@scripts/run-headline.sh $(BUILD)/fecsim all

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	@$(BUILD)/bench/fecsim_bench

clean:
	@rm -rf $(BUILD)

#!/usr/bin/env bash
# Rewrites tests/regression/goldens.json from the current model (after a deliberate change that
# moves a figure). Review the diff and say in the commit message why the figures moved.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build --target test_goldens -j "$(nproc)" >/dev/null
FECSIM_UPDATE_GOLDENS=1 build/tests/regression/test_goldens >/dev/null
git --no-pager diff --stat tests/regression/goldens.json || true

#!/usr/bin/env bash
# Runs rows of scripts/published.tsv and prints simulated vs measured (scripts/headline.py;
# predictions with the band of their platform's uncertain parameters, scripts/bands.tsv).
# Usage: run-headline.sh FECSIM [EXPERIMENT | all]   (default: the E1 experiment)
exec python3 "$(dirname "$0")/headline.py" "$@"

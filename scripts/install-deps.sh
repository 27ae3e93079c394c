#!/usr/bin/env bash
# Installs the Debian packages fecsim needs to build, test and run.
# Idempotent: asks apt only for what is missing, and says so when nothing is.
set -euo pipefail

packages=(
  build-essential cmake pkg-config make
  libsystemc-dev          # SystemC 2.3.4 + TLM 2.0.6 (pkg-config only, no CMake config)
  nlohmann-json3-dev      # configuration and result files
  libgtest-dev            # unit and scenario tests
  libbenchmark-dev        # bench/ (speed of the models)
  libpcap-dev             # pcap capture and replay
  tshark                  # independent frame decoder used by the traffic tests
  libboost-dev            # Boost.Asio: the wire bridge (TAP, UDP) and the telemetry server
  iproute2 tcpdump tcpreplay  # the bridge test: a network namespace, a real sender and a real capture
  python3                 # scripts/ (headline table, sweeps)
  python3-matplotlib      # scripts/plot.py (make plots)
  slurm-wlm munge         # the sweep test submits a Slurm array job to a cluster it starts
  clang libclang-rt-14-dev  # make fuzz: libFuzzer harnesses with ASan and UBSan (fuzz/)
  llvm                    # llvm-mca: cycles per code path (scripts/kernel-costs.py --mca, and its test)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present, nothing to do"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
# Through env: sudo clears the environment, and tshark's debconf question would then wait for an answer.
apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get)
"${apt[@]}" update -qq
"${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"

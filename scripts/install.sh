#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine: Debian's Chromium (for the
# docs browser test) and the npm workspaces exactly as locked.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version

npm ci --no-audit --no-fund

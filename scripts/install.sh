#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine: Debian's packages (Chromium for the
# docs browser test; ClickHouse; Java, Python and Go for the SDKs) and the npm workspaces exactly as locked.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: Chromium; ClickHouse server and client (18.16 on Debian 12) for the second
# storage engine, started per test run by scripts/clickhouse/start.mjs; PostgreSQL 15 for the
# entities several server processes share, started per test run by scripts/postgres/start.mjs
# (as the package's `postgres` user when run as root, through util-linux's setpriv); for the SDKs
# (packages/sdk-python, packages/sdk-go) Java for openapi-generator, Debian's Python with the
# generated client's dependencies, pip/setuptools/wheel to build the wheel offline and pytest,
# and the Go toolchain.
packages=(chromium
  clickhouse-server clickhouse-client
  postgresql util-linux
  python3 python3-urllib3 python3-dateutil python3-six python3-certifi python3-pytest
  python3-pip python3-setuptools python3-wheel
  golang-go)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
chromium --version
java -version 2>&1 | head -1
/usr/bin/python3 --version
go version
clickhouse-client --version
/usr/lib/postgresql/15/bin/postgres --version

npm ci --no-audit --no-fund

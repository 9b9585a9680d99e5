#!/usr/bin/env bash
# Installs netnode as a systemd service: the program under /opt/netnode, its own system user,
# /etc/netnode/netnode.env, the unit (and with --provider the provider drop-in, the system
# packages Docker and libvirt need, and the VM base images). Run as root from a clone.
#   bash systemd/install.sh [--provider] [--prefix /opt/netnode]
set -euo pipefail
provider=0
prefix=/opt/netnode
while [ $# -gt 0 ]; do
  case "$1" in
    --provider) provider=1 ;;
    --prefix) prefix="$2"; shift ;;
    *) echo "usage: install.sh [--provider] [--prefix DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root" >&2; exit 1; }
src="$(cd "$(dirname "$0")/.." && pwd)"

echo "install: copying the program to $prefix"
mkdir -p "$prefix"
tar -C "$src" --exclude=./node_modules --exclude=./dist --exclude=./.tools --exclude=./.git -cf - . | tar -C "$prefix" -xf -
bash "$prefix/scripts/setup.sh"

id netnode >/dev/null 2>&1 || useradd --system --home-dir /var/lib/netnode --shell /usr/sbin/nologin netnode
install -d -m 0755 /etc/netnode
[ -f /etc/netnode/netnode.env ] || install -m 0600 -o root -g netnode "$src/systemd/netnode.env.example" /etc/netnode/netnode.env
sed "s#/opt/netnode#$prefix#g" "$src/systemd/netnode.service" > /etc/systemd/system/netnode.service

if [ "$provider" = 1 ]; then
  echo "install: provider mode (Docker, libvirt, VM images)"
  bash "$prefix/scripts/system-deps.sh"
  for g in docker libvirt kvm; do getent group "$g" >/dev/null || groupadd --system "$g"; done
  install -d /etc/systemd/system/netnode.service.d
  install -m 0644 "$src/systemd/netnode.service.d/provider.conf" /etc/systemd/system/netnode.service.d/provider.conf
  "$prefix/bin/netnode" image build --backend docker
fi

systemctl daemon-reload
systemctl enable --now netnode.service
echo "install: done — systemctl status netnode; settings in /etc/netnode/netnode.env"

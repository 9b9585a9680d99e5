#!/usr/bin/env bash
# System packages and daemons the provider features and their tests need: the Docker engine,
# libvirt with QEMU, debootstrap (VM images), OpenSSH (gateway tests), tmux (interactive tests),
# wrk (the load generator of bench:api's block intake).
# Run as root. Idempotent: installs what is missing, starts what is not running.
set -euo pipefail
# dnsmasq-base: libvirt runs it for every NAT network (only a "recommends", so name it).
packages=(docker.io libvirt-daemon-system libvirt-dev qemu-system-x86 qemu-utils dnsmasq-base debootstrap
          openssh-client openssh-server tmux iptables nftables e2fsprogs ca-certificates systemd
          wrk)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "system-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

wait_for() { # wait_for <seconds> <command...>
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}

if ! docker info >/dev/null 2>&1; then
  echo "system-deps: starting dockerd"
  mkdir -p /var/log
  nohup dockerd >/var/log/netnode-dockerd.log 2>&1 &
  wait_for 60 docker info || { echo "system-deps: dockerd did not start; see /var/log/netnode-dockerd.log" >&2; tail -20 /var/log/netnode-dockerd.log >&2; exit 1; }
fi

# libvirt checks its cached QEMU capabilities against whether its QEMU user can open /dev/kvm. A
# root-only device node (no udev rule on this image) makes every check fail and QEMU be probed again
# on each call, about a minute per domain start: give it Debian's usual root:kvm 0660.
if [ -c /dev/kvm ] && getent group kvm >/dev/null; then
  chgrp kvm /dev/kvm && chmod 0660 /dev/kvm
fi

if ! virsh -c qemu:///system version >/dev/null 2>&1; then
  echo "system-deps: starting libvirtd"
  pgrep -x virtlogd >/dev/null || virtlogd -d
  pgrep -x libvirtd >/dev/null || libvirtd -d
  wait_for 60 virsh -c qemu:///system version || { echo "system-deps: libvirtd did not start" >&2; exit 1; }
fi
echo "system-deps: docker $(docker version --format '{{.Server.Version}}'), libvirt $(virsh -c qemu:///system version --daemon 2>/dev/null | awk '/daemon/ {print $NF}')"

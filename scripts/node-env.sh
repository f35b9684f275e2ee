# Sourced by the project's scripts: puts a Node >= 22.19 first on PATH.
# The machine's own Node is used when recent enough; otherwise Node 24 from the npm
# registry's `node` package (it ships the binary) is installed once under .tools/.
# Only the npm registry is contacted.
MAILROOM_ROOT="${MAILROOM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
MAILROOM_NODE_VERSION="${MAILROOM_NODE_VERSION:-24.21.0}"

mailroom_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)'
}

if ! mailroom_node_ok; then
  _tools="$MAILROOM_ROOT/.tools/node-$MAILROOM_NODE_VERSION"
  if [ ! -x "$_tools/node_modules/node/bin/node" ]; then
    echo "mailroom: installing Node $MAILROOM_NODE_VERSION from the npm registry into $_tools" >&2
    mkdir -p "$_tools"
    npm install --prefix "$_tools" --no-save --no-package-lock --no-audit --no-fund \
      --loglevel=error "node@$MAILROOM_NODE_VERSION" >&2 || return 1 2>/dev/null || exit 1
  fi
  export PATH="$_tools/node_modules/node/bin:$PATH"
  hash -r
fi
unset _tools

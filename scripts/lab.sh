#!/usr/bin/env bash
# `npm run lab`: set up Jupyter if needed, then start JupyterLab from .venv on 127.0.0.1,
# serving the repository (so notebooks/ and lib/ are both reachable) and opening notebooks/.
#   TOOLRL_LAB_PORT=8899 npm run lab     # another port (default 8888)
#   npm run lab -- --no-browser          # extra arguments go to `jupyter lab`
#   TOOLRL_LAB_TOKEN=secret npm run lab  # a token of your own (default: a fresh random one per start)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup-jupyter.sh"

port="${TOOLRL_LAB_PORT:-8888}"
# The token is chosen here, not by Jupyter, so the line below can print an address that opens without a login page.
token="${TOOLRL_LAB_TOKEN:-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')}"
args=(--ip=127.0.0.1 --port="$port" --ServerApp.root_dir="$root" --LabApp.default_url=/lab/tree/notebooks
  --IdentityProvider.token="$token")
# Jupyter refuses to run as root unless told; containers and CI machines often are root.
if [ "$(id -u)" = "0" ]; then args+=(--allow-root); fi

echo "[lab] JupyterLab on http://127.0.0.1:$port/lab/tree/notebooks?token=$token (root $root);" \
  "notebooks use the 'TypeScript (toolrl)' kernel"
cd "$root"
# default_url opens notebooks/ in the file browser. (A positional "notebooks/" would instead make
# notebooks/ the server root and hide lib/, data/ etc. from the file browser.)
exec "$root/.venv/bin/jupyter" lab "${args[@]}" "$@"

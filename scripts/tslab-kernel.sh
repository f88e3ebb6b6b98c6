#!/usr/bin/env bash
# Start the project's tslab kernel with the REPOSITORY ROOT as working directory.
#
# Why a wrapper: tslab compiles every cell with rootDir = the kernel's cwd, and Jupyter
# starts kernels in the notebook's folder (notebooks/). From there `import "../lib/..."`
# leaves rootDir and fails, so we cd to the repo root first; notebooks then import
# "./lib/...". Jupyter passes the connection file as $1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# TOOLRL_NODE is baked into the kernelspec by setup-jupyter.sh, because Jupyter may be
# started from a shell whose PATH has a different (or no) node.
node_bin="${TOOLRL_NODE:-node}"
# The preload orders tslab's socket binds (see the file for the start-up race it closes).
exec "$node_bin" --require "$root/scripts/tslab-bind-order.cjs" "$root/node_modules/tslab/bin/tslab" kernel --config-path "$1"

#!/usr/bin/env bash
# Idempotent Jupyter setup for the notebooks:
#   1. a project-local venv .venv/ (git-ignored) with pinned JupyterLab, nbconvert, nbclient, ipykernel;
#   2. the project's tslab kernel "toolrl-tslab" registered INSIDE the venv
#      (.venv/share/jupyter/kernels/), never in the user's home, rendered from the committed
#      template jupyter/kernels/toolrl-tslab/kernel.json.in with absolute paths;
#   3. the project's JupyterLab defaults (jupyter/lab/overrides.json: never ask to fetch Jupyter news,
#      never check for updates) in the venv's application settings folder, where JupyterLab reads
#      overrides.json as defaults that a user's own settings still win over.
# Warm runs only compare a stamp file, the rendered kernelspec and the settings file: well under 2 s.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
# The system python, not the pyenv one first on PATH (docs/design.md D). Override with TOOLRL_PYTHON.
py="${TOOLRL_PYTHON:-/usr/bin/python3}"
kernel_name="toolrl-tslab"
template="$root/jupyter/kernels/$kernel_name/kernel.json.in"
kernel_dir="$venv/share/jupyter/kernels/$kernel_name"

# Pins: the versions present in this machine's offline wheel index. Bump them together.
pins=(jupyterlab==4.6.4 nbconvert==7.17.1 nbclient==0.11.0 ipykernel==7.4.0)
stamp="$venv/.toolrl-jupyter-pins"

say() { echo "[setup-jupyter] $*"; }
die() { echo "[setup-jupyter] ERROR: $*" >&2; exit 1; }

# One setup at a time (two test files may ask for it at once): an advisory lock on this script itself.
exec 9<"${BASH_SOURCE[0]}"
flock 9

# --- 1. venv -----------------------------------------------------------------------------
if [ ! -x "$venv/bin/python" ]; then
  [ -x "$py" ] || die "$py not found; install python3 (apt-get install -y python3 python3-venv) or set TOOLRL_PYTHON"
  # Debian ships venv's ensurepip in a separate package; without it `python3 -m venv` half-creates
  # the venv and fails, so check first and say what to install.
  if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    die "$py lacks the venv/ensurepip modules. On Debian/Ubuntu: apt-get install -y python3-venv"
  fi
  say "creating venv $venv with $py"
  "$py" -m venv "$venv" || { rm -rf "$venv"; die "python -m venv failed (on Debian: apt-get install -y python3-venv)"; }
fi

# --- 2. pinned packages --------------------------------------------------------------------
want="${pins[*]}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  pip_args=()
  # Where pip's configuration lists only local (file://) extra indexes, make them the index: otherwise pip
  # also tries the public index first and waits minutes for it offline. Elsewhere (CI with internet) pip's own
  # configuration applies unchanged. TOOLRL_PIP_ARGS overrides both.
  local_indexes=$("$venv/bin/python" -m pip config get global.extra-index-url 2>/dev/null || true)
  if [ -n "${TOOLRL_PIP_ARGS:-}" ]; then
    read -r -a pip_args <<<"$TOOLRL_PIP_ARGS"
  elif [[ "$local_indexes" == file://* ]]; then
    read -r -a urls <<<"$local_indexes"
    pip_args=(--index-url "${urls[0]}")
    for u in "${urls[@]:1}"; do pip_args+=(--extra-index-url "$u"); done
  fi
  say "installing ${pins[*]} into .venv (pip ${pip_args[*]:-<default index>})"
  # The grep drops pip's per-package "Location ... is ignored" noise about the (mostly empty) extra index.
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${pip_args[@]}" "${pins[@]}" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); then
    die "pip install failed (see above)"
  fi
  echo "$want" >"$stamp"
else
  say "venv packages up to date ($want)"
fi

# --- 3. kernelspec -------------------------------------------------------------------------
[ -f "$template" ] || die "missing kernelspec template $template"
[ -f "$root/node_modules/tslab/bin/tslab" ] || die "node_modules/tslab missing; run npm install first"
node_bin="$(command -v node || true)"
[ -n "$node_bin" ] || die "node not found on PATH"
# Render with python's json module so odd characters in paths are escaped correctly.
rendered="$("$venv/bin/python" - "$template" "$root" "$node_bin" <<'PY'
import json, sys
template, root, node = sys.argv[1:4]
text = open(template).read()
# json.dumps(...)[1:-1] gives the escaped body of a JSON string literal.
text = text.replace("@ROOT@", json.dumps(root)[1:-1]).replace("@NODE@", json.dumps(node)[1:-1])
json.loads(text)  # fail loudly on a broken template
print(text, end="")
PY
)"
if [ -f "$kernel_dir/kernel.json" ] && [ "$(cat "$kernel_dir/kernel.json")" == "$rendered" ]; then
  say "kernel $kernel_name up to date ($kernel_dir)"
else
  mkdir -p "$kernel_dir"
  printf '%s' "$rendered" >"$kernel_dir/kernel.json"
  # Copy optional logos etc. that sit next to the template.
  for f in "$(dirname "$template")"/*; do
    case "$f" in *.in) ;; *) cp "$f" "$kernel_dir/" ;; esac
  done
  say "installed kernel $kernel_name -> $kernel_dir (cwd = $root)"
fi

# --- 4. JupyterLab setting defaults ----------------------------------------------------------
# JupyterLab's application directory is <venv>/share/jupyter/lab (`jupyter lab path`); overrides.json in
# its settings/ folder replaces the defaults of the schemas. Without it, the first start asks in a
# toast whether to fetch "official Jupyter news" from the internet.
overrides_src="$root/jupyter/lab/overrides.json"
overrides_dst="$venv/share/jupyter/lab/settings/overrides.json"
[ -f "$overrides_src" ] || die "missing $overrides_src"
if cmp -s "$overrides_src" "$overrides_dst"; then
  say "lab settings up to date ($overrides_dst)"
else
  mkdir -p "$(dirname "$overrides_dst")"
  cp "$overrides_src" "$overrides_dst"
  say "installed lab settings -> $overrides_dst (no news fetch, no update check)"
fi

#!/usr/bin/env bash
# `npm run setup:native`: optional native TensorFlow backend for tfjs (the `tensorflow` backend), installed
# project-locally under .native/ (git-ignored). lib/backend.ts picks it up automatically; wasm stays the fallback.
#
# Steps (each prints a "== [setup:native]" line; the script is idempotent, a rerun only re-links and re-checks):
#   1. preflight: node, npm, the project's node_modules/@tensorflow/tfjs-core (run `npm ci` first).
#   2. normal route: `npm install --no-save @tensorflow/tfjs-node@<tfjs version>` into .native/; its install
#      script downloads libtensorflow 2.9.1 from storage.googleapis.com (skipped at once when that host is
#      unreachable).
#   3. fallback (CPU only): install the package with --ignore-scripts, take the TensorFlow C library
#      (libtensorflow_cc.so.2 + libtensorflow_framework.so.2, which export the TF_* / TFE_* C API) and the C
#      headers out of a `tensorflow-cpu` pip wheel (pip's offline index here has 2.21.0), and build the
#      addon tfjs_binding.node with node-gyp against them.
#   4. link: the @tensorflow/tfjs* packages under .native/node_modules become symlinks to the project's own,
#      so tfjs-node registers its backend in the project's tfjs-core instance (else tf.getBackend() never
#      sees it).
#   5. check: `TOOLRL_BACKEND=tensorflow node --import tsx` initialises the backend and does a matMul.
#
# Environment:
#   TOOLRL_NATIVE=cpu|gpu    cpu (default): @tensorflow/tfjs-node. gpu: @tensorflow/tfjs-node-gpu, normal route
#                            only; it needs an NVIDIA GPU with CUDA 11.2 + cuDNN 8.1 (the libtensorflow 2.9.1 GPU
#                            build it downloads). Untested here (no GPU, no download access); no wheel fallback.
#   TOOLRL_NATIVE_DIR        install folder (default <repo>/.native; lib/backend.ts reads the same variable).
#   TOOLRL_NATIVE_ROUTE      auto (default) | download | wheel: force one route.
#   TOOLRL_NATIVE_FORCE=1    rebuild even when an addon is already there.
#   TOOLRL_TF_WHEEL          path of a tensorflow(-cpu) wheel to use instead of `pip download`.
#   TOOLRL_TF_WHEEL_SPEC     pip requirement to download (default tensorflow-cpu==2.21.0).
#   PIP_INDEX_ARGS           index flags for pip (default: the machine's offline indexes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"
T0=$(date +%s)

step() { echo "== [setup:native] $*"; }
info() { echo "   $*"; }
die() { echo "setup:native: ERROR: $*" >&2; exit 1; }

VARIANT="${TOOLRL_NATIVE:-cpu}"
case "$VARIANT" in
  cpu) PKG=@tensorflow/tfjs-node ;;
  gpu) PKG=@tensorflow/tfjs-node-gpu ;;
  *) die "TOOLRL_NATIVE=\"$VARIANT\" is not one of cpu, gpu" ;;
esac
NATIVE_DIR="${TOOLRL_NATIVE_DIR:-$ROOT/.native}"
ROUTE="${TOOLRL_NATIVE_ROUTE:-auto}"
case "$ROUTE" in auto|download|wheel) ;; *) die "TOOLRL_NATIVE_ROUTE=\"$ROUTE\" is not one of auto, download, wheel" ;; esac
WHEEL_SPEC="${TOOLRL_TF_WHEEL_SPEC:-tensorflow-cpu==2.21.0}"
PIP_INDEX_ARGS="${PIP_INDEX_ARGS:---index-url file:///opt/pypi/simple --extra-index-url file:///opt/pypi-more/simple}"
PKG_DIR="$NATIVE_DIR/node_modules/$PKG"
TFLIB_DIR="$NATIVE_DIR/libtensorflow"   # lib/ + include/ taken from the wheel (fallback route)

# ---------------------------------------------------------------------------------------------------------
step "1/5 preflight ($PKG into $NATIVE_DIR)"
command -v node >/dev/null || die "node not found"
command -v npm >/dev/null || die "npm not found"
CORE_PJ="$ROOT/node_modules/@tensorflow/tfjs-core/package.json"
[ -f "$CORE_PJ" ] || die "$CORE_PJ missing: run \`npm ci\` in $ROOT first"
TFJS_VERSION=$(node -p "require('$CORE_PJ').version")
info "project tfjs-core $TFJS_VERSION, node $(node -v) (N-API $(node -p process.versions.napi))"
mkdir -p "$NATIVE_DIR"
[ -f "$NATIVE_DIR/package.json" ] || echo '{ "name": "toolrl-native", "private": true }' > "$NATIVE_DIR/package.json"

# Path where tfjs-node's dist/index.js looks for its addon (node-pre-gyp's rule), or "" when not installed.
binding_path() {
  [ -f "$PKG_DIR/package.json" ] || { echo ""; return; }
  (cd "$PKG_DIR" && node -p "require('@mapbox/node-pre-gyp').find(require('path').resolve('package.json'))" 2>/dev/null) || echo ""
}
installed_version() {
  [ -f "$PKG_DIR/package.json" ] && node -p "require('$PKG_DIR/package.json').version" || echo ""
}

# Symlink .native's @tensorflow/tfjs* to the project's copies (one tfjs-core instance in the process).
link_to_project() {
  local d name linked=0
  for d in "$NATIVE_DIR"/node_modules/@tensorflow/* "$PKG_DIR"/node_modules/@tensorflow/*; do
    [ -e "$d" ] || [ -L "$d" ] || continue
    name=$(basename "$d")
    case "$name" in tfjs-node|tfjs-node-gpu) continue ;; esac
    if [ -d "$ROOT/node_modules/@tensorflow/$name" ]; then
      if [ ! -L "$d" ] && [ -f "$d/package.json" ]; then
        local v pv
        v=$(node -p "require('$d/package.json').version"); pv=$(node -p "require('$ROOT/node_modules/@tensorflow/$name/package.json').version")
        [ "$v" = "$pv" ] || info "warning: $PKG wants @tensorflow/$name $v, the project has $pv (linking the project's)"
      fi
      rm -rf "$d"; ln -s "$ROOT/node_modules/@tensorflow/$name" "$d"; linked=$((linked + 1))
    fi
  done
  info "linked $linked @tensorflow packages to $ROOT/node_modules/@tensorflow"
}

run_check() {
  step "5/5 check: TOOLRL_BACKEND=tensorflow initialises and runs a matMul"
  local code
  code="require('./lib/backend').initBackend({backend:'tensorflow',verbose:true}).then(()=>{const tf=require('@tensorflow/tfjs');"
  code+="const c=tf.matMul(tf.tensor2d([[1,2],[3,4]]),tf.tensor2d([[5,6],[7,8]]));const v=Array.from(c.dataSync());"
  code+="if(tf.getBackend()!=='tensorflow'||v.join(',')!=='19,22,43,50')throw new Error('got backend '+tf.getBackend()+' matMul '+v);"
  code+="console.log('   ok: backend '+tf.getBackend()+', matMul [[1,2],[3,4]]x[[5,6],[7,8]] = '+JSON.stringify(v));})"
  code+=".catch(e=>{console.error(e&&e.stack||e);process.exit(1);})"
  (cd "$ROOT" && TOOLRL_BACKEND=tensorflow TOOLRL_NATIVE_DIR="$NATIVE_DIR" node --import tsx -e "$code") \
    || die "the native backend is installed under $NATIVE_DIR but does not initialise (see above); remove $NATIVE_DIR and rerun, or use TOOLRL_BACKEND=wasm"
  step "done in $(( $(date +%s) - T0 )) s: the automatic backend choice is now 'tensorflow' (TOOLRL_BACKEND=wasm to override)"
}

# ---------------------------------------------------------------------------------------------------------
BP=$(binding_path)
if [ "${TOOLRL_NATIVE_FORCE:-0}" != 1 ] && [ -n "$BP" ] && [ -f "$BP" ] && [ "$(installed_version)" = "$TFJS_VERSION" ]; then
  step "2/5 + 3/5 skipped: $PKG $TFJS_VERSION and its addon are already installed ($BP)"
  step "4/5 link to the project's tfjs"
  link_to_project
  run_check
  exit 0
fi

# ---------------------------------------------------------------------------------------------------------
ok=0
if [ "$ROUTE" = wheel ]; then
  step "2/5 normal route skipped (TOOLRL_NATIVE_ROUTE=wheel)"
else
  step "2/5 normal route: npm install --no-save $PKG@$TFJS_VERSION (downloads libtensorflow 2.9.1)"
  if node -e "require('https').request({host:'storage.googleapis.com',method:'HEAD',path:'/',timeout:8000},()=>process.exit(0)).on('timeout',()=>process.exit(1)).on('error',()=>process.exit(1)).end()"; then
    if (cd "$NATIVE_DIR" && npm install --no-save --no-audit --no-fund --no-package-lock "$PKG@$TFJS_VERSION"); then
      BP=$(binding_path)
      if [ -n "$BP" ] && [ -f "$BP" ]; then ok=1; info "installed with its downloaded libtensorflow"; else info "npm install finished but no addon at '$BP'"; fi
    else
      info "npm install (with the libtensorflow download) failed"
    fi
  else
    info "storage.googleapis.com (libtensorflow download host) is unreachable: skipping this route"
  fi
fi

if [ "$ok" != 1 ]; then
  [ "$ROUTE" = download ] && die "the normal route failed and TOOLRL_NATIVE_ROUTE=download forbids the wheel fallback"
  [ "$VARIANT" = gpu ] && die "$PKG needs the libtensorflow 2.9.1 GPU download (CUDA 11.2 + cuDNN 8.1), which failed; there is no wheel fallback for the GPU build. Use TOOLRL_NATIVE=cpu (or nothing: wasm)."
  step "3/5 fallback: build $PKG against the TensorFlow C library of a $WHEEL_SPEC wheel"

  info "3a. npm install --no-save --ignore-scripts $PKG@$TFJS_VERSION"
  (cd "$NATIVE_DIR" && npm install --no-save --no-audit --no-fund --no-package-lock --ignore-scripts "$PKG@$TFJS_VERSION") \
    || die "npm could not install $PKG@$TFJS_VERSION into $NATIVE_DIR (registry unreachable?)"

  if [ -f "$TFLIB_DIR/lib/libtensorflow_cc.so.2" ] && [ -f "$TFLIB_DIR/lib/libtensorflow_framework.so.2" ] && [ -f "$TFLIB_DIR/include/tensorflow/c/c_api.h" ]; then
    info "3b. TensorFlow C library already extracted in $TFLIB_DIR"
  else
    WHEEL="${TOOLRL_TF_WHEEL:-}"
    if [ -z "$WHEEL" ]; then
      info "3b. pip download $WHEEL_SPEC --no-deps ($PIP_INDEX_ARGS)"
      PY=$(command -v python3 || command -v python || true)
      [ -n "$PY" ] || die "no python3 for \`pip download\`; set TOOLRL_TF_WHEEL=/path/to/tensorflow_cpu-*.whl"
      rm -rf "$NATIVE_DIR/cache"; mkdir -p "$NATIVE_DIR/cache"
      # shellcheck disable=SC2086
      "$PY" -m pip download "$WHEEL_SPEC" --no-deps --only-binary=:all: --platform manylinux_2_27_x86_64 \
          --python-version 3.11 $PIP_INDEX_ARGS -d "$NATIVE_DIR/cache" \
        || die "pip could not download $WHEEL_SPEC (and the libtensorflow download failed too): no native backend; wasm stays in use"
      WHEEL=$(ls "$NATIVE_DIR"/cache/*.whl | head -n1)
    else
      info "3b. using TOOLRL_TF_WHEEL=$WHEEL"
    fi
    [ -f "$WHEEL" ] || die "wheel $WHEEL not found"
    info "3c. extracting libtensorflow_cc.so.2, libtensorflow_framework.so.2 and the C headers from $(basename "$WHEEL")"
    rm -rf "$TFLIB_DIR" "$NATIVE_DIR/unpack"; mkdir -p "$NATIVE_DIR/unpack"
    "${PY:-python3}" - "$WHEEL" "$NATIVE_DIR/unpack" <<'EOF' || die "could not extract the TensorFlow C library from the wheel"
import sys, zipfile
whl, out = sys.argv[1], sys.argv[2]
keep_dirs = ('tensorflow/c/', 'tensorflow/core/platform/', 'tsl/platform/', 'xla/tsl/c/')
with zipfile.ZipFile(whl) as z:
    names = [n for n in z.namelist()
             if n in ('tensorflow/libtensorflow_cc.so.2', 'tensorflow/libtensorflow_framework.so.2')
             or (n.startswith('tensorflow/include/') and n.endswith('.h')
                 and n[len('tensorflow/include/'):].startswith(keep_dirs))]
    if not any(n.endswith('libtensorflow_cc.so.2') for n in names):
        sys.exit('no tensorflow/libtensorflow_cc.so.2 in ' + whl)
    for n in names:
        z.extract(n, out)
EOF
    mkdir -p "$TFLIB_DIR"
    mv "$NATIVE_DIR/unpack/tensorflow/include" "$TFLIB_DIR/include"
    mkdir -p "$TFLIB_DIR/lib"
    mv "$NATIVE_DIR"/unpack/tensorflow/libtensorflow_*.so.2 "$TFLIB_DIR/lib/"
    rm -rf "$NATIVE_DIR/unpack"
    if [ -z "${TOOLRL_TF_WHEEL:-}" ]; then rm -rf "$NATIVE_DIR/cache"; fi   # the wheel (~270 MB) is not needed any more
  fi
  # binding.gyp links -ltensorflow -ltensorflow_framework from deps/lib with rpath $ORIGIN/../../deps/lib and
  # includes deps/include: libtensorflow.so -> the wheel's libtensorflow_cc.so.2 (it exports the C API).
  rm -rf "$PKG_DIR/deps"; mkdir -p "$PKG_DIR/deps/lib"
  ln -s "$TFLIB_DIR/include" "$PKG_DIR/deps/include"
  for f in libtensorflow_cc.so.2 libtensorflow_framework.so.2; do ln -s "$TFLIB_DIR/lib/$f" "$PKG_DIR/deps/lib/$f"; done
  ln -s libtensorflow_cc.so.2 "$PKG_DIR/deps/lib/libtensorflow.so"
  ln -s libtensorflow_framework.so.2 "$PKG_DIR/deps/lib/libtensorflow_framework.so"

  BP=$(binding_path)
  [ -n "$BP" ] || die "could not work out where $PKG expects its addon (node-pre-gyp find failed)"
  NAPI=$(echo "$BP" | sed -n 's#.*/napi-v\([0-9]*\)/.*#\1#p')
  [ -n "$NAPI" ] || die "unexpected addon path $BP"
  GYP=$(command -v node-gyp || true)
  if [ -z "$GYP" ]; then
    GYP="$(npm root -g)/npm/node_modules/node-gyp/bin/node-gyp.js"
    [ -f "$GYP" ] || GYP="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js"
    [ -f "$GYP" ] || die "node-gyp not found (neither on PATH nor bundled with npm)"
    GYP="node $GYP"
  fi
  NODEDIR="${npm_config_nodedir:-$(npm config get nodedir 2>/dev/null || true)}"
  if [ -z "$NODEDIR" ] || [ "$NODEDIR" = undefined ] || [ "$NODEDIR" = null ]; then
    NODEDIR="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
    [ -f "$NODEDIR/include/node/common.gypi" ] || NODEDIR=""
  fi
  NODEDIR_ARG=(); [ -n "$NODEDIR" ] && NODEDIR_ARG=(--nodedir="$NODEDIR")
  info "3d. node-gyp rebuild (N-API $NAPI, headers ${NODEDIR:-downloaded by node-gyp}) -> $BP"
  (cd "$PKG_DIR" && $GYP rebuild "${NODEDIR_ARG[@]}" -j 2 --module_name=tfjs_binding \
      --module_path="$(dirname "$BP")" --napi_build_version="$NAPI") \
    || die "node-gyp could not build the tfjs-node addon against the wheel's TensorFlow C library (see above)"
  [ -f "$BP" ] || cp "$PKG_DIR/build/Release/tfjs_binding.node" "$BP"
  rm -rf "$PKG_DIR/build/Release/obj.target" "$PKG_DIR/build/Release/.deps"
  info "built $BP"
else
  step "3/5 fallback not needed"
fi

step "4/5 link to the project's tfjs"
link_to_project
run_check

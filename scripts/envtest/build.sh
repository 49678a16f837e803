#!/usr/bin/env bash
# Build (or reuse) the envtest binaries: kube-apiserver and kube-controller-manager 1.20.2, compiled from Debian
# bookworm's own `kubernetes` source package with nothing but Debian's archive (`apt-get source`, the vendored Go tree,
# Debian's Go). Also installs etcd (`etcd-server`) and, when no kubectl is on the PATH, `kubernetes-client`.
#   Result: $PDS_ENVTEST_DIR (default ~/.cache/pds-envtest/1.20.2)/{kube-apiserver,kube-controller-manager}
# The first build takes ~7 min and ~1.3 GB RAM on 2 cores; afterwards this returns at once. No standard input needed.
set -euo pipefail
OUT=${PDS_ENVTEST_DIR:-$HOME/.cache/pds-envtest/1.20.2}
say() { echo "[envtest $(date +%H:%M:%S)] $*"; }
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v kubectl >/dev/null || need+=(kubernetes-client)
command -v openssl >/dev/null || need+=(openssl)
command -v curl >/dev/null || need+=(curl)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ -x "$OUT/kube-apiserver" ] && [ -x "$OUT/kube-controller-manager" ]; then
  say "binaries present in $OUT"; exit 0
fi

say "building kube-apiserver and kube-controller-manager 1.20.2 into $OUT (first time only, ~7 min)"
# A deb-src entry next to the machine's own Debian entry (same archive, same keyring).
if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/; then
  sed -n '/^Types: deb$/,/^$/p' /etc/apt/sources.list.d/debian.sources | sed 's/^Types: deb$/Types: deb-src/' \
    | $SUDO tee /etc/apt/sources.list.d/debian-src.sources >/dev/null
fi
say "installing the Go toolchain and build tools"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  golang-go dpkg-dev rsync golang-github-modern-go-reflect2-dev make >/dev/null
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
say "fetching the kubernetes source package"
cd "$WORK" && apt-get source -qq kubernetes >/dev/null 2>&1   # 1.20.5+really1.20.2: the whole tree with vendor/
cd kubernetes-*/
# The vendored reflect2 v1.0.1 segfaults under Go >= 1.18 on the first CRD write; Debian's 1.0.2 does not.
R=vendor/github.com/modern-go/reflect2
find "$R" -maxdepth 1 -type f \( -name '*.go' -o -name '*.s' \) -delete
for f in /usr/share/gocode/src/github.com/modern-go/reflect2/*; do case $f in *_test.go|*/go.mod) ;; *) cp "$f" "$R/";; esac; done
mkdir -p .go/src/k8s.io; ln -sfn ../../.. .go/src/k8s.io/kubernetes
say "compiling (progress every minute)"
( while sleep 60; do say "still compiling…"; done ) & ticker=$!
trap 'kill $ticker 2>/dev/null; rm -rf "$WORK"' EXIT
GOPATH=$PWD/.go GOCACHE=$WORK/gocache GOPROXY=off GOFLAGS=-mod=vendor CGO_ENABLED=0 \
  make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" > "$WORK/build.log" 2>&1 \
  || { tail -n 40 "$WORK/build.log"; say "build failed"; exit 1; }
mkdir -p "$OUT" && cp _output/bin/kube-apiserver _output/bin/kube-controller-manager "$OUT/"
say "built into $OUT"

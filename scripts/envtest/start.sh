#!/usr/bin/env bash
# Start a throwaway control plane on loopback, like controller-runtime's envtest: etcd + kube-apiserver (TLS, RBAC,
# token auth, service-account tokens) + kube-controller-manager (ResourceQuota status, namespace deletion, garbage
# collection, service-account token Secrets). No kubelet, scheduler or Argo controllers: tests play those parts.
#   usage: start.sh DIR        (binaries from scripts/envtest/build.sh; every port is a free one on 127.0.0.1)
# PDS_ENVTEST_PORTS, when set, names the four ports (below).
# PDS_ETCD_QUOTA_BYTES, when set, is etcd's --quota-backend-bytes (the bench seeds more than the 2 GiB default holds).
# Writes DIR/kubeconfig (user "admin", group system:masters), DIR/ports, DIR/*.pid and DIR/*.log; stop with stop.sh DIR.
set -euo pipefail
DIR=$(mkdir -p "$1" && cd "$1" && pwd)
BIN=${PDS_ENVTEST_DIR:-$HOME/.cache/pds-envtest/1.20.2}
for b in "$BIN/kube-apiserver" "$BIN/kube-controller-manager"; do
  [ -x "$b" ] || { echo "missing $b: run scripts/envtest/build.sh" >&2; exit 1; }
done
command -v etcd >/dev/null || { echo "missing etcd: apt-get install etcd-server (or run scripts/envtest/build.sh)" >&2; exit 1; }

# Ports: PDS_ENVTEST_PORTS when set (four free ones, space-separated: etcd, etcd's peer port, kube-apiserver,
# kube-controller-manager; the test fixture passes ports drawn below the kernel's ephemeral range, see
# test/fixtures/free-port.ts), else the kernel's choice, each bound and released.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
if [ -n "${PDS_ENVTEST_PORTS:-}" ]; then
  read -r ETCD PEER KAS KCM <<< "$PDS_ENVTEST_PORTS"
  for p in "$ETCD" "$PEER" "$KAS" "$KCM"; do
    [[ "$p" =~ ^[0-9]+$ ]] || { echo "PDS_ENVTEST_PORTS must be four port numbers (got \"$PDS_ENVTEST_PORTS\")" >&2; exit 2; }
  done
else
  ETCD=$(free_port); PEER=$(free_port); KAS=$(free_port); KCM=$(free_port)
fi
printf 'etcd=%s\nkube-apiserver=%s\nkube-controller-manager=%s\n' "$ETCD" "$KAS" "$KCM" > "$DIR/ports"

# wait_for NAME LOG CMD…: retry CMD for up to 60 s; on time-out show the component's log and fail.
wait_for() {
  local name=$1 log=$2; shift 2
  for _ in $(seq 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "$name did not become ready within 60 s; last lines of $log:" >&2; tail -n 30 "$log" >&2; exit 1
}

cd "$DIR"; rm -rf etcd-data certs; mkdir -p certs
[ -f sa.key ] || { openssl genrsa -out sa.key 2048 2>/dev/null; openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null; }
echo "admin-token,admin,admin-uid,system:masters" > tokens.csv

etcd --name envtest --data-dir "$DIR/etcd-data" --listen-client-urls "http://127.0.0.1:$ETCD" ${PDS_ETCD_QUOTA_BYTES:+--quota-backend-bytes="$PDS_ETCD_QUOTA_BYTES"} \
  --advertise-client-urls "http://127.0.0.1:$ETCD" --listen-peer-urls "http://127.0.0.1:$PEER" \
  --initial-advertise-peer-urls "http://127.0.0.1:$PEER" --initial-cluster "envtest=http://127.0.0.1:$PEER" \
  > etcd.log 2>&1 &
echo $! > etcd.pid
wait_for etcd etcd.log curl -sf "http://127.0.0.1:$ETCD/health"

"$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD" --bind-address=127.0.0.1 --secure-port="$KAS" \
  --insecure-port=0 --advertise-address=127.0.0.1 --cert-dir="$DIR/certs" --token-auth-file="$DIR/tokens.csv" \
  --authorization-mode=RBAC --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$DIR/sa.pub" --service-account-signing-key-file="$DIR/sa.key" \
  --service-cluster-ip-range=10.96.0.0/24 --api-audiences=https://kubernetes.default.svc > kas.log 2>&1 &
echo $! > kas.pid
wait_for kube-apiserver kas.log curl -skf -H 'Authorization: Bearer admin-token' "https://127.0.0.1:$KAS/readyz"

cat > kubeconfig <<KC
apiVersion: v1
kind: Config
clusters: [{name: envtest, cluster: {server: "https://127.0.0.1:$KAS", certificate-authority: "$DIR/certs/apiserver.crt"}}]
users: [{name: admin, user: {token: admin-token}}]
contexts: [{name: envtest, context: {cluster: envtest, user: admin}}]
current-context: envtest
KC

"$BIN/kube-controller-manager" --kubeconfig="$DIR/kubeconfig" --bind-address=127.0.0.1 --secure-port="$KCM" --port=0 \
  --leader-elect=false --service-account-private-key-file="$DIR/sa.key" --root-ca-file="$DIR/certs/apiserver.crt" \
  --use-service-account-credentials=false --controllers='*,-csrsigning' > kcm.log 2>&1 &
echo $! > kcm.pid
wait_for kube-controller-manager kcm.log curl -skf "https://127.0.0.1:$KCM/healthz"
echo "control plane up: https://127.0.0.1:$KAS (kubeconfig $DIR/kubeconfig)"

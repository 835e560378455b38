#!/usr/bin/env bash
# up.sh BINDIR STATEDIR — a throw-away Kubernetes control plane on the host's
# loopback, set up by hand the way kubeadm would: PKI, etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, a bootstrap token and the RBAC
# that lets kubelets TLS-bootstrap. Every listener is on 127.0.0.1; the e2e
# VMs reach the API server through QEMU's guestfwd as https://10.0.2.100:6443.
# See README.md next to this script.
#
# BINDIR holds etcd kube-apiserver kube-controller-manager kube-scheduler
# (test/realbin/build.sh prints it). STATEDIR is wiped if it holds an earlier
# run (whose processes are stopped first). On success the processes keep
# running in the background; stop them with down.sh STATEDIR. On failure
# everything started is stopped again (E2E_CLUSTER_KEEP=1: left running).
#
# Environment (defaults):
#   E2E_APISERVER_PORT    6443   kube-apiserver secure port on 127.0.0.1
#   E2E_APISERVER_BIND    127.0.0.1  its bind address (0.0.0.0 in run.sh's lab namespace: the guests connect to it, and it to their kubelets)
#   E2E_ETCD_PORT         12379  etcd client port (plain HTTP, 127.0.0.1)
#   E2E_ETCD_PEER_PORT    12380  etcd peer port (127.0.0.1)
#   E2E_KCM_PORT          10257  kube-controller-manager secure port
#   E2E_SCHEDULER_PORT    10259  kube-scheduler secure port
#   E2E_GUEST_ADDR        10.0.2.100  where the guests see the API server
#   E2E_GUEST_PORT        6443        (in the serving cert and the guest kubeconfigs)
#   E2E_NODE_MONITOR_GRACE 40s   a silent kubelet's Node goes NotReady after this
#   E2E_CLUSTER_TIMEOUT   120    seconds to wait for each component
#   E2E_CLUSTER_V         0      klog verbosity of the components
#
# Outputs in STATEDIR/out/: ca.crt, bootstrap-kubelet.conf and admin.conf (for
# the guest: server https://$E2E_GUEST_ADDR:$E2E_GUEST_PORT), admin-host.conf
# (server https://127.0.0.1:$E2E_APISERVER_PORT) and cluster.env (sourceable:
# ports, token, servers). Logs: STATEDIR/logs/<component>.log; pids:
# STATEDIR/pids/<component>.pid.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

[ $# -eq 2 ] || die "usage: $0 BINDIR STATEDIR"
bindir=$(cd "$1" && pwd) || die "BINDIR $1: no such directory"
[ -n "$2" ] || die "STATEDIR is empty"
mkdir -p "$2"
state=$(cd "$2" && pwd)
[ "$state" != / ] || die "STATEDIR must not be /"

api_port=${E2E_APISERVER_PORT:-6443}
etcd_port=${E2E_ETCD_PORT:-12379}
etcd_peer_port=${E2E_ETCD_PEER_PORT:-12380}
kcm_port=${E2E_KCM_PORT:-10257}
sched_port=${E2E_SCHEDULER_PORT:-10259}
guest_addr=${E2E_GUEST_ADDR:-10.0.2.100}
guest_port=${E2E_GUEST_PORT:-6443}
grace=${E2E_NODE_MONITOR_GRACE:-40s}
timeout_s=${E2E_CLUSTER_TIMEOUT:-120}
verbosity=${E2E_CLUSTER_V:-0}
service_cidr=10.96.0.0/16
# Pod networks: each Node's spec.podCIDR (a /24) from here, which flannel
# (--kube-subnet-mgr) uses.
cluster_cidr=${E2E_CLUSTER_CIDR:-10.244.0.0/16}
service_ip=10.96.0.1 # the first IP of service_cidr: the kubernetes Service
host_server=https://127.0.0.1:$api_port
guest_server=https://$guest_addr:$guest_port

for b in etcd kube-apiserver kube-controller-manager kube-scheduler; do
  [ -x "$bindir/$b" ] || die "$bindir/$b: missing or not executable"
done
for t in openssl curl jq base64 setsid; do
  command -v "$t" >/dev/null || die "missing $t"
done

t_start=$(now_ms)

# --- start clean: stop an earlier run's processes, wipe its state. Refuse to
# wipe a non-empty directory that up.sh did not create.
if [ -n "$(ls -A "$state")" ]; then
  [ -e "$state/.e2e-cluster" ] || die "$state is not empty and was not made by up.sh; refusing to wipe it"
  log "cleaning up an earlier run in $state"
  stop_all "$state" || die "could not stop the earlier run's processes"
  find "$state" -mindepth 1 -delete
fi
mkdir -p "$state"/{pki,etcd,logs,pids,out,run}
chmod 700 "$state/pki" "$state/etcd"
touch "$state/.e2e-cluster"

# --- ports must be free (a stale cluster or a real one would answer instead).
for p in "$api_port" "$etcd_port" "$etcd_peer_port" "$kcm_port" "$sched_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    die "127.0.0.1:$p is already in use (set E2E_*_PORT, see the header of $0)"
  fi
done

started=0
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ] && [ "$started" = 1 ]; then
    if [ "${E2E_CLUSTER_KEEP:-0}" = 1 ]; then
      log "failed; E2E_CLUSTER_KEEP=1: leaving the processes running (down.sh $state)"
    else
      log "failed; stopping what was started (logs kept in $state/logs)"
      stop_all "$state" || true
    fi
  fi
}
trap on_exit EXIT
# A signal must also clean up: turn it into an exit, which runs on_exit.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# --- PKI (EC P-256). The CA signs everything, including the kubelets' client
# certificates (kube-controller-manager's csrsigning).
pki=$state/pki
t0=$(now_ms)
newkey() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; chmod 600 "$1"; }
# sign NAME SUBJECT EXTENSIONS: pki/NAME.key + pki/NAME.crt signed by the CA
# (env ca=front-proxy-ca: by that one).
sign() {
  local name=$1 subj=$2 ext=$3
  newkey "$pki/$name.key"
  openssl req -new -key "$pki/$name.key" -subj "$subj" -config "$pki/req.cnf" -out "$pki/$name.csr"
  printf '%s\n' "[v3]" "$ext" > "$pki/$name.ext"
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/${ca:-ca}.crt" -CAkey "$pki/${ca:-ca}.key" \
    -CAcreateserial -days 2 -sha256 -extfile "$pki/$name.ext" -extensions v3 \
    -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}
printf '%s\n' '[req]' 'distinguished_name = dn' 'prompt = no' '[dn]' > "$pki/req.cnf"
newkey "$pki/ca.key"
openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=kubernetes" -config "$pki/req.cnf" -days 3 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" \
  -addext "subjectKeyIdentifier=hash" -out "$pki/ca.crt"
leaf_client="basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
authorityKeyIdentifier=keyid"
sign apiserver "/CN=kube-apiserver" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
authorityKeyIdentifier=keyid
subjectAltName=IP:127.0.0.1,IP:$guest_addr,IP:$service_ip,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
# system:masters: the kubelets' webhook authorizer lets it do logs/exec/port-forward.
sign apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$leaf_client"
sign admin "/O=system:masters/CN=kubernetes-admin" "$leaf_client"
sign controller-manager "/CN=system:kube-controller-manager" "$leaf_client"
sign scheduler "/CN=system:kube-scheduler" "$leaf_client"
# The front proxy (aggregation layer), as kubeadm: its own CA and client
# cert; also lets the controller-manager and the scheduler load
# extension-apiserver-authentication without complaining.
newkey "$pki/front-proxy-ca.key"
openssl req -x509 -new -key "$pki/front-proxy-ca.key" -subj "/CN=front-proxy-ca" -config "$pki/req.cnf" -days 3 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign" \
  -addext "subjectKeyIdentifier=hash" -out "$pki/front-proxy-ca.crt"
ca=front-proxy-ca sign front-proxy-client "/CN=front-proxy-client" "$leaf_client"
newkey "$pki/sa.key"
openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
rm -f "$pki"/*.srl "$pki/req.cnf"
log "PKI in $pki ($(($(now_ms) - t0)) ms)"

# kubeconfig FILE SERVER USER (cert CRT KEY | token TOKEN)
kubeconfig() {
  local file=$1 server=$2 user=$3 kind=$4
  {
    cat <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$pki/ca.crt")
contexts:
- name: $user@e2e
  context:
    cluster: e2e
    user: $user
current-context: $user@e2e
preferences: {}
users:
- name: $user
  user:
EOF
    case $kind in
      cert) printf '    client-certificate-data: %s\n    client-key-data: %s\n' \
        "$(base64 -w0 < "$5")" "$(base64 -w0 < "$6")" ;;
      token) printf '    token: %s\n' "$5" ;;
    esac
  } > "$file"
  chmod 600 "$file"
}
kubeconfig "$state/run/controller-manager.conf" "$host_server" system:kube-controller-manager cert "$pki/controller-manager.crt" "$pki/controller-manager.key"
kubeconfig "$state/run/scheduler.conf" "$host_server" system:kube-scheduler cert "$pki/scheduler.crt" "$pki/scheduler.key"

# --- processes. start NAME ARGS...: BINDIR/NAME in its own session, stdin
# from /dev/null, stdout+stderr to logs/NAME.log, pid to pids/NAME.pid.
declare -A t_started
start() {
  local name=$1 pid
  shift
  t_started[$name]=$(now_ms)
  setsid "$bindir/$name" "$@" < /dev/null >> "$state/logs/$name.log" 2>&1 &
  pid=$!
  echo "$pid" > "$state/pids/$name.pid"
  started=1
  log "started $name (pid $pid, log $state/logs/$name.log)"
}
# wait_ready NAME CHECK...: poll CHECK every 0.2 s until it succeeds; fail
# early if NAME's process is gone, and after timeout_s with its log's tail.
wait_ready() {
  local name=$1 deadline
  shift
  deadline=$(($(now_ms) + timeout_s * 1000))
  until "$@" >/dev/null 2>&1; do
    if ! pid_of "$state" "$name" >/dev/null; then
      log "ERROR: $name exited before it was ready; last lines of $state/logs/$name.log:"
      tail -n 40 "$state/logs/$name.log" | sed 's/^/  | /' >&2
      return 1
    fi
    if [ "$(now_ms)" -ge "$deadline" ]; then
      log "ERROR: $name not ready after ${timeout_s}s ($*); last lines of $state/logs/$name.log:"
      tail -n 40 "$state/logs/$name.log" | sed 's/^/  | /' >&2
      return 1
    fi
    sleep 0.2
  done
  [ "${quiet:-0}" = 1 ] || log "$name ready in $(($(now_ms) - t_started[$name])) ms"
}
admin_curl() {
  curl -sS --max-time 10 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$@"
}
# healthz PORT: the component's /healthz says ok (always-allowed path; the
# serving cert is self-signed by the component, hence -k).
healthz() { [ "$(curl -sk --max-time 5 "https://127.0.0.1:$1/healthz")" = ok ]; }

start etcd \
  --name=e2e \
  --data-dir="$state/etcd" \
  --listen-client-urls="http://127.0.0.1:$etcd_port" \
  --advertise-client-urls="http://127.0.0.1:$etcd_port" \
  --listen-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-advertise-peer-urls="http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster="e2e=http://127.0.0.1:$etcd_peer_port" \
  --initial-cluster-state=new \
  --initial-cluster-token="e2e-$$" \
  --snapshot-count=10000 \
  --log-level=warn
wait_ready etcd curl -fsS --max-time 5 "http://127.0.0.1:$etcd_port/health"

start kube-apiserver \
  --v="$verbosity" \
  --bind-address="${E2E_APISERVER_BIND:-127.0.0.1}" \
  --secure-port="$api_port" \
  --advertise-address="$guest_addr" \
  --etcd-servers="http://127.0.0.1:$etcd_port" \
  --tls-cert-file="$pki/apiserver.crt" \
  --tls-private-key-file="$pki/apiserver.key" \
  --client-ca-file="$pki/ca.crt" \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname \
  --authorization-mode=Node,RBAC \
  --enable-admission-plugins=NodeRestriction \
  --enable-bootstrap-token-auth=true \
  --allow-privileged=true \
  --service-cluster-ip-range="$service_cidr" \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" \
  --service-account-signing-key-file="$pki/sa.key" \
  --requestheader-client-ca-file="$pki/front-proxy-ca.crt" \
  --requestheader-allowed-names=front-proxy-client \
  --requestheader-username-headers=X-Remote-User \
  --requestheader-group-headers=X-Remote-Group \
  --requestheader-extra-headers-prefix=X-Remote-Extra- \
  --proxy-client-cert-file="$pki/front-proxy-client.crt" \
  --proxy-client-key-file="$pki/front-proxy-client.key" \
  --enable-aggregator-routing=true \
  --profiling=false
wait_ready kube-apiserver admin_curl -f "$host_server/readyz"

kcm_conf=$state/run/controller-manager.conf
start kube-controller-manager \
  --v="$verbosity" \
  --bind-address=127.0.0.1 \
  --secure-port="$kcm_port" \
  --kubeconfig="$kcm_conf" \
  --authentication-kubeconfig="$kcm_conf" \
  --authorization-kubeconfig="$kcm_conf" \
  --client-ca-file="$pki/ca.crt" \
  --requestheader-client-ca-file="$pki/front-proxy-ca.crt" \
  --root-ca-file="$pki/ca.crt" \
  --service-account-private-key-file="$pki/sa.key" \
  --cluster-signing-cert-file="$pki/ca.crt" \
  --cluster-signing-key-file="$pki/ca.key" \
  --use-service-account-credentials=true \
  --controllers='*,bootstrapsigner,tokencleaner' \
  --service-cluster-ip-range="$service_cidr" \
  --allocate-node-cidrs=true --cluster-cidr="$cluster_cidr" --node-cidr-mask-size=24 \
  --node-monitor-grace-period="$grace" \
  --flex-volume-plugin-dir="$state/run/flexvolume" \
  --leader-elect=false \
  --profiling=false
sched_conf=$state/run/scheduler.conf
start kube-scheduler \
  --v="$verbosity" \
  --bind-address=127.0.0.1 \
  --secure-port="$sched_port" \
  --kubeconfig="$sched_conf" \
  --authentication-kubeconfig="$sched_conf" \
  --authorization-kubeconfig="$sched_conf" \
  --leader-elect=false \
  --profiling=false

# --- bootstrap token and the kubeadm RBAC for TLS bootstrap, while the
# controller-manager and the scheduler come up. POST is create-only: 201
# (created) or 409 (already there) are both fine.
# post PATH JSON
post() {
  local code
  code=$(admin_curl -o "$state/run/last-response.json" -w '%{http_code}' \
    -X POST -H 'Content-Type: application/json' --data-binary "$2" "$host_server$1") || code=000
  case $code in
    200 | 201 | 202) ;;
    409) log "$1: already exists" ;;
    *) log "ERROR: POST $1: HTTP $code"; cat "$state/run/last-response.json" >&2 2>/dev/null || true; return 1 ;;
  esac
}
token_id=$(openssl rand -hex 3)      # [a-z0-9]{6}
token_secret=$(openssl rand -hex 8)  # [a-z0-9]{16}
token=$token_id.$token_secret
expiration=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
node_group=system:bootstrappers:kubeadm:default-node-token
post /api/v1/namespaces/kube-system/secrets "$(jq -nc \
  --arg id "$token_id" --arg secret "$token_secret" --arg exp "$expiration" --arg group "$node_group" '{
  apiVersion: "v1", kind: "Secret",
  metadata: {name: "bootstrap-token-\($id)", namespace: "kube-system"},
  type: "bootstrap.kubernetes.io/token",
  stringData: {
    description: "numa-partition e2e: kubelet TLS bootstrap",
    "token-id": $id, "token-secret": $secret, expiration: $exp,
    "usage-bootstrap-authentication": "true", "usage-bootstrap-signing": "true",
    "auth-extra-groups": $group}}')"
# crb NAME CLUSTERROLE GROUP
crb() {
  post /apis/rbac.authorization.k8s.io/v1/clusterrolebindings "$(jq -nc --arg name "$1" --arg role "$2" --arg group "$3" '{
    apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding",
    metadata: {name: $name},
    roleRef: {apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: $role},
    subjects: [{apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: $group}]}')"
}
# The names kubeadm gives them (cmd/kubeadm/app/phases/bootstraptoken/node).
crb kubeadm:kubelet-bootstrap system:node-bootstrapper "$node_group"
crb kubeadm:node-autoapprove-bootstrap system:certificates.k8s.io:certificatesigningrequests:nodeclient "$node_group"
crb kubeadm:node-autoapprove-certificate-rotation system:certificates.k8s.io:certificatesigningrequests:selfnodeclient system:nodes
log "bootstrap token $token_id (expires $expiration) and kubeadm's TLS-bootstrap ClusterRoleBindings created"

wait_ready kube-controller-manager healthz "$kcm_port"
wait_ready kube-scheduler healthz "$sched_port"

# Pods are refused in a namespace until its ServiceAccount "default" exists
# (the serviceaccount controller creates it).
sa_default() { admin_curl -f "$host_server/api/v1/namespaces/default/serviceaccounts/default"; }
quiet=1 wait_ready kube-controller-manager sa_default
log "ServiceAccount default/default exists ($(($(now_ms) - t_start)) ms after start)"

# --- outputs.
out=$state/out
cp "$pki/ca.crt" "$out/ca.crt"
kubeconfig "$out/bootstrap-kubelet.conf" "$guest_server" kubelet-bootstrap token "$token"
kubeconfig "$out/admin.conf" "$guest_server" kubernetes-admin cert "$pki/admin.crt" "$pki/admin.key"
kubeconfig "$out/admin-host.conf" "$host_server" kubernetes-admin cert "$pki/admin.crt" "$pki/admin.key"
cat > "$out/cluster.env" <<EOF
# written by test/e2e/cluster/up.sh; sourceable
E2E_APISERVER_PORT=$api_port
E2E_ETCD_PORT=$etcd_port
E2E_KCM_PORT=$kcm_port
E2E_SCHEDULER_PORT=$sched_port
E2E_HOST_SERVER=$host_server
E2E_GUEST_SERVER=$guest_server
E2E_BOOTSTRAP_TOKEN=$token
E2E_BOOTSTRAP_TOKEN_EXPIRATION=$expiration
E2E_NODE_MONITOR_GRACE=$grace
EOF
chmod 600 "$out/cluster.env"
log "ready in $(($(now_ms) - t_start)) ms: host $host_server, guests $guest_server; outputs in $out"

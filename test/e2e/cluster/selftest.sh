#!/usr/bin/env bash
# selftest.sh BINDIR STATEDIR — prove, without a VM, that a kubelet can join
# the control plane up.sh started in STATEDIR: it walks the kubelet's TLS
# bootstrap by hand with curl and openssl, using only what a guest gets
# (STATEDIR/out/bootstrap-kubelet.conf) and the guest's URL
# (https://10.0.2.100:6443, routed to 127.0.0.1:<port> with curl
# --connect-to, so the serving cert is checked against the guest's address):
#   1. the bootstrap token authenticates as system:bootstrap:<id> in
#      system:bootstrappers:kubeadm:default-node-token;
#   2. it creates a CSR for system:node:selftest (O=system:nodes, EC key,
#      signer kubernetes.io/kube-apiserver-client-kubelet, usages digital
#      signature + client auth), which csrapproving approves and csrsigning
#      issues;
#   3. the issued cert authenticates as system:node:selftest: GET of its own
#      Node is 404 (authorized, just not there), another node's is 403;
#   4. a renewal CSR made with that cert is auto-approved (selfnodeclient);
#   5. only with E2E_SELFTEST_NOTREADY=1 (~45 s more): a fake kubelet
#      registers Node selftest Ready, renews its Lease once and goes silent;
#      prints how long until the Node is Ready=Unknown, then deletes it;
# then deletes its CSRs and prints each control-plane process's RSS and that
# it runs BINDIR's binary. Exits non-zero on the first failed check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
log() { echo "selftest: $*" >&2; }

[ $# -eq 2 ] || die "usage: $0 BINDIR STATEDIR"
bindir=$(cd "$1" && pwd)
state=$(cd "$2" && pwd)
out=$state/out
[ -r "$out/cluster.env" ] || die "$out/cluster.env missing: run up.sh first"
# shellcheck source=/dev/null
. "$out/cluster.env"
node=selftest
work=$state/selftest
rm -rf "$work"; mkdir -p "$work"; chmod 700 "$work"

# --- what the guest has: the bootstrap kubeconfig.
bconf=$out/bootstrap-kubelet.conf
server=$(awk '$1 == "server:" {print $2}' "$bconf")
token=$(awk '$1 == "token:" {print $2}' "$bconf")
awk '$1 == "certificate-authority-data:" {print $2}' "$bconf" | base64 -d > "$work/ca.crt"
[ "$server" = "$E2E_GUEST_SERVER" ] || die "bootstrap-kubelet.conf: server $server, want $E2E_GUEST_SERVER"
cmp -s "$work/ca.crt" "$out/ca.crt" || die "bootstrap-kubelet.conf: embedded CA differs from out/ca.crt"
[ -n "$token" ] || die "bootstrap-kubelet.conf: no token"
hostport=${server#https://}
log "guest URL $server -> $E2E_HOST_SERVER"

# g CURL-ARGS... URL-PATH: curl the guest URL, verified against the guest
# address, connected to the host's loopback port.
g() {
  local path=${*: -1}
  curl -sS --max-time 10 --connect-to "$hostport:127.0.0.1:$E2E_APISERVER_PORT" \
    --cacert "$work/ca.crt" "${@:1:$#-1}" "$server$path"
}
as_token=(-H "Authorization: Bearer $token")
admin=(--cert "$state/pki/admin.crt" --key "$state/pki/admin.key")

# --- 1. who the token is.
review='{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}'
who=$(g "${as_token[@]}" -f -X POST -H 'Content-Type: application/json' --data-binary "$review" \
  /apis/authentication.k8s.io/v1/selfsubjectreviews) || die "the bootstrap token does not authenticate"
user=$(jq -r .status.userInfo.username <<<"$who")
groups=$(jq -r '.status.userInfo.groups | join(",")' <<<"$who")
log "token authenticates as $user ($groups)"
case ",$groups," in *,system:bootstrappers:kubeadm:default-node-token,*) ;; *) die "token lacks group system:bootstrappers:kubeadm:default-node-token" ;; esac


printf '%s\n' '[req]' 'distinguished_name = dn' 'prompt = no' '[dn]' > "$work/req.cnf"
newcsr() { # newcsr BASENAME
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$work/$1.key" 2>/dev/null
  openssl req -new -key "$work/$1.key" -config "$work/req.cnf" \
    -subj "/O=system:nodes/CN=system:node:$node" -out "$work/$1.csr"
  jq -nc --arg req "$(base64 -w0 < "$work/$1.csr")" '{
    apiVersion: "certificates.k8s.io/v1", kind: "CertificateSigningRequest",
    metadata: {generateName: "node-csr-selftest-"},
    spec: {request: $req, signerName: "kubernetes.io/kube-apiserver-client-kubelet",
           usages: ["digital signature", "client auth"]}}'
}
# issue BASENAME AUTH-ARGS...: create the CSR, wait for status.certificate
# (60 s), write BASENAME.crt; appends the CSR's name to csrs.
issue() {
  local base=$1 name resp deadline t0 cert
  shift
  t0=$(now_ms)
  resp=$(g "$@" -f -X POST -H 'Content-Type: application/json' --data-binary "$(newcsr "$base")" \
    /apis/certificates.k8s.io/v1/certificatesigningrequests) || die "$base: CSR create refused"
  name=$(jq -r .metadata.name <<<"$resp")
  log "$base: created CSR $name as $(jq -r .spec.username <<<"$resp")"
  deadline=$((t0 + 60000))
  while :; do
    resp=$(g "$@" -f "/apis/certificates.k8s.io/v1/certificatesigningrequests/$name") || die "$base: cannot read CSR $name"
    cert=$(jq -r '.status.certificate // empty' <<<"$resp")
    [ -z "$cert" ] || break
    if jq -e '.status.conditions[]? | select(.type == "Denied" or .type == "Failed")' <<<"$resp" >/dev/null; then
      die "$base: CSR $name: $(jq -c .status.conditions <<<"$resp")"
    fi
    [ "$(now_ms)" -lt "$deadline" ] || die "$base: CSR $name not issued in 60 s: $(jq -c .status <<<"$resp"); see $state/logs/kube-controller-manager.log"
    sleep 0.2
  done
  base64 -d <<<"$cert" > "$work/$base.crt"
  log "$base: CSR $name $(jq -r '[.status.conditions[] | "\(.type) (\(.reason))"] | join(", ")' <<<"$resp"), issued in $(($(now_ms) - t0)) ms: $(openssl x509 -in "$work/$base.crt" -noout -subject -enddate | tr '\n' ' ')"
  echo "$name" >> "$work/csrs"
}

# --- 2. first CSR, with the token (nodeclient auto-approval).
issue node "${as_token[@]}"
openssl verify -CAfile "$work/ca.crt" "$work/node.crt" >/dev/null || die "issued cert does not verify against the CA"

# --- 3. the issued cert is system:node:selftest.
as_node=(--cert "$work/node.crt" --key "$work/node.key")
code=$(g "${as_node[@]}" -o "$work/get-own.json" -w '%{http_code}' "/api/v1/nodes/$node")
[ "$code" = 404 ] || die "GET /api/v1/nodes/$node with the issued cert: HTTP $code, want 404: $(cat "$work/get-own.json")"
log "GET /api/v1/nodes/$node with the issued cert: 404 NotFound (authenticated and authorized)"
code=$(g "${as_node[@]}" -o "$work/get-other.json" -w '%{http_code}' /api/v1/nodes/other)
[ "$code" = 403 ] || die "GET /api/v1/nodes/other with the issued cert: HTTP $code, want 403"
log "GET /api/v1/nodes/other with the issued cert: 403 ($(jq -r .message "$work/get-other.json"))"

# --- 4. renewal, with the node's own cert (selfnodeclient auto-approval).
issue renewed "${as_node[@]}"

# --- 5. optional (E2E_SELFTEST_NOTREADY=1, ~45 s): play a kubelet that
# registers, reports Ready, renews its Lease once and stops; time until the
# node lifecycle controller marks the Node Ready=Unknown.
if [ "${E2E_SELFTEST_NOTREADY:-0}" = 1 ]; then
  ts=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  json=(-H 'Content-Type: application/json')
  g "${as_node[@]}" -fo /dev/null -X POST "${json[@]}" --data-binary \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$node\"}}" /api/v1/nodes ||
    die "system:node:$node cannot create its Node"
  g "${as_node[@]}" -fo /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary \
    "$(jq -nc --arg t "$ts" '{status: {conditions: [{type: "Ready", status: "True", reason: "KubeletReady",
      message: "selftest", lastHeartbeatTime: $t, lastTransitionTime: $t}]}}')" "/api/v1/nodes/$node/status" ||
    die "system:node:$node cannot update its Node status"
  g "${as_node[@]}" -fo /dev/null -X POST "${json[@]}" --data-binary \
    "$(jq -nc --arg n "$node" --arg t "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)" '{apiVersion: "coordination.k8s.io/v1",
      kind: "Lease", metadata: {name: $n, namespace: "kube-node-lease"},
      spec: {holderIdentity: $n, leaseDurationSeconds: 40, renewTime: $t}}')" \
    /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases || die "system:node:$node cannot create its Lease"
  t0=$(now_ms)
  log "Node $node registered Ready, Lease renewed once; waiting for NotReady (grace $E2E_NODE_MONITOR_GRACE)"
  while :; do
    st=$(g "${admin[@]}" -f "/api/v1/nodes/$node" | jq -r '.status.conditions[] | select(.type == "Ready") | "\(.status) \(.reason)"')
    case $st in True*) ;; *) break ;; esac
    [ $(($(now_ms) - t0)) -lt 120000 ] || die "Node $node still Ready after 120 s"
    sleep 1
  done
  log "Node $node Ready=$st $(($(now_ms) - t0)) ms after its last heartbeat"
  g "${admin[@]}" -fo /dev/null -X DELETE "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/$node" || true
  g "${admin[@]}" -fo /dev/null -X DELETE "/api/v1/nodes/$node" || log "could not delete Node $node"
fi

# --- clean up the CSRs (admin), so the VMs' kubelets see only their own.
while read -r name; do
  g "${admin[@]}" -fo /dev/null -X DELETE "/apis/certificates.k8s.io/v1/certificatesigningrequests/$name" || log "could not delete CSR $name"
done < "$work/csrs"

# --- the processes.
total=0
for c in "${CLUSTER_COMPONENTS[@]}"; do
  pid=$(pid_of "$state" "$c") || die "$c is not running"
  exe=$(readlink "/proc/$pid/exe")
  [ "$exe" = "$bindir/$c" ] || die "$c (pid $pid) runs $exe, not $bindir/$c"
  rss=$(rss_kib "$pid")
  total=$((total + rss))
  printf 'selftest: %-24s pid %-7s RSS %4d MiB  %s (%s)\n' "$c" "$pid" $((rss / 1024)) "$exe" \
    "$("$exe" --version 2>&1 | head -1)" >&2
done
printf 'selftest: %-24s             RSS %4d MiB\n' total $((total / 1024)) >&2
log "ok: token -> CSR -> approved + issued -> system:node:$node authenticates; renewal approved"

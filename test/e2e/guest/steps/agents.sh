# A hostNetwork node agent runs unmodified once per partition: prometheus
# node_exporter 1.12.1 as its upstream chart deploys it (a DaemonSet,
# hostNetwork and hostPID, :9100), from test/addons. Each partition's pod
# is Running without a restart, answers at its partition's address on
# :9100 (from the other partition, as a Prometheus elsewhere scrapes it),
# and reports that partition's interfaces only; nothing listens on :9100
# in the host's namespace. In host mode the N agents would collide on the
# one :9100 (docs/network.md).
. /e2e/guest/lib.sh
requires network
deploy_addon node-exporter "node-exporter DaemonSet"
pod_on() { pods_on kube-system app.kubernetes.io/name=node-exporter "$(node_name $1)" 2>/dev/null | head -1; }
for p in $PARTITIONS; do
  running() { pod_running "$(pod_on $p)" kube-system; }
  wait_until $POD_START_S "node-exporter Running on $(node_name $p)" running \
    || { k -n kube-system describe pod "$(pod_on $p)" | tail -15; continue; }
done
metrics() { in_netns "$1" bash -c "$(declare -f http_get); exec 3<>/dev/tcp/$2/9100 && printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && cat <&3"; }
for p in $PARTITIONS; do
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    out=$(metrics $q ${ADDRESS[$p]})
    grep -q '^node_cpu_seconds_total' <<<"$out" \
      && ok "node_exporter of $p answers at ${ADDRESS[$p]}:9100 (scraped from np-$q)" \
      || fail "no node_exporter metrics at ${ADDRESS[$p]}:9100: $(head -c 300 <<<"$out")"
    # /proc/net/dev (the netdev collector) shows the namespace of the
    # process reading it: the agent's, its partition's.
    devs=$(grep -o '^node_network_receive_bytes_total{device="[^"]*"' <<<"$out" | sed 's/.*device="//; s/"$//' | sort -u | tr '\n' ' ')
    case " $devs " in
      *" npbr0 "*|*" np-node"*) fail "node_exporter of $p sees the host's links: $devs" ;;
      *" eth0 "*) ok "node_exporter of $p sees its namespace's links only: $devs" ;;
      *) fail "node_exporter of $p lists no eth0: $devs" ;;
    esac
  done
  restarts=$(api "$(pod_path "$(pod_on $p)" kube-system)" '.status.containerStatuses[0].restartCount')
  expect_eq "node-exporter on $(node_name $p) restarts" "$restarts" 0
done
host_listen=$(ss -Hltn | awk '{print $4}' | grep -E ':9100$' | tr '\n' ' ')
[ -z "$host_listen" ] && ok "nothing listens on :9100 in the host's namespace" || fail ":9100 open on the host: $host_listen"

# Issue 40: each partition's allocator daemon serves /metrics on its
# partition's address at :9464 (allocator.metrics_port's default), where a
# Prometheus elsewhere scrapes it as it scrapes node_exporter above
# (monitoring/prometheus-scrape.yaml), and not in the host's namespace.
alloc_metrics() { in_netns "$1" bash -c "exec 3<>/dev/tcp/$2/9464 && printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3 && cat <&3"; }
for p in $PARTITIONS; do
  for q in $PARTITIONS; do
    [ $q = $p ] && continue
    out=$(alloc_metrics $q ${ADDRESS[$p]})
    grep -q "^numa_partition_build_info{.*partition=\"$p\"" <<<"$out" \
      && ok "allocator of $p serves its metrics at ${ADDRESS[$p]}:9464 (scraped from np-$q)" \
      || fail "no allocator metrics of $p at ${ADDRESS[$p]}:9464: $(head -c 300 <<<"$out")"
  done
done
host_listen=$(ss -Hltn | awk '{print $4}' | grep -E ':9464$' | tr '\n' ' ')
[ -z "$host_listen" ] && ok "no allocator metrics port in the host's namespace" || fail ":9464 open on the host: $host_listen"
run k delete -f $STATE/node-exporter.yaml --wait=false >/dev/null
finish

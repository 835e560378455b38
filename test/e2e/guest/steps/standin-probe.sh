# The infrastructure the partition steps stand on, without numa-partition:
# Debian's containerd runs in the image, the stand-in kubelet accepts a
# KubeletConfiguration, waits for the runtime, starts its "pod" in
# <cgroupRoot>/<name>-kubepods.slice over D-Bus and serves /healthz; and on
# cgroup v2 a slice's AllowedCPUs/AllowedMemoryNodes really confine that pod.
. /e2e/guest/lib.sh
d=/run/e2eprobe
mkdir -p $d
cat > $d/kubelet.yaml <<'YAML'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: systemd
cgroupRoot: /e2eprobe.slice
port: 20250
healthzPort: 20248
containerRuntimeEndpoint: unix:///run/e2eprobe/containerd.sock
YAML
# The probe slice: node1's CPUs minus one, node1's memory.
run systemctl set-property --runtime e2eprobe.slice AllowedCPUs=3 AllowedMemoryNodes=1 || fail "set-property e2eprobe.slice"
run systemd-run --quiet --unit=e2eprobe-containerd --slice=e2eprobe.slice \
  /usr/bin/containerd --address $d/containerd.sock --root $d/root --state $d/state \
  || fail "starting containerd"
wait_until 60 "containerd answers (ctr version)" ctr --address $d/containerd.sock version
run systemd-run --quiet --unit=e2eprobe-kubelet --slice=e2eprobe.slice -p Type=notify \
  /e2e/bin/standin-kubelet --config=$d/kubelet.yaml --root-dir=$d/kubelet --hostname-override=e2eprobe --v=2 \
  || fail "stand-in kubelet did not become ready: $(journalctl -u e2eprobe-kubelet --no-pager -o cat | tail -5)"
expect_eq "stand-in /healthz" "$(http_get 20248 /healthz)" ok
journalctl -u e2eprobe-kubelet --no-pager -o cat | grep -q 'ignoring argument.*--v=2' \
  && ok "unknown flag --v=2 logged and ignored" || fail "stand-in did not log the unknown flag --v=2"
pid=$(sed -n 's/.*"pid": \([0-9]*\).*/\1/p' $d/kubelet/standin-kubelet/pod.json)
[ -n "$pid" ] && [ -d /proc/$pid ] || die "no running pod process in $d/kubelet/standin-kubelet/pod.json"
expect_eq "pod cgroup" "$(cgroup_of $pid)" /e2eprobe.slice/e2eprobe-kubepods.slice/standin-pod-e2eprobe.scope
if [ "$E2E_MODE" = v2 ]; then
  expect_eq "pod Cpus_allowed_list (AllowedCPUs=3 enforced)" "$(status_field $pid Cpus_allowed_list)" 3
  expect_eq "pod Mems_allowed_list (AllowedMemoryNodes=1 enforced)" "$(status_field $pid Mems_allowed_list)" 1
  expect_eq "slice cpuset.cpus.effective" "$(cat /sys/fs/cgroup/e2eprobe.slice/cpuset.cpus.effective)" 3
else
  # systemd manages no cpuset on v1: the property is stored, not enforced.
  expect_eq "pod Cpus_allowed_list (v1: AllowedCPUs not enforced)" "$(status_field $pid Cpus_allowed_list)" 0-3
fi
# A bad config must make the stand-in fail, naming the problem.
sed 's/cgroupDriver: systemd/cgroupDriver: cgroupfs/' $d/kubelet.yaml > $d/bad.yaml
out=$(/e2e/bin/standin-kubelet --config=$d/bad.yaml 2>&1) && fail "stand-in accepted cgroupDriver cgroupfs" \
  || { echo "$out" | grep -q 'cgroupDriver is \\"cgroupfs\\"' && ok "stand-in refuses cgroupfs driver" || fail "stand-in's refusal does not name cgroupDriver: $out"; }
run systemctl stop e2eprobe.slice || fail "stopping e2eprobe.slice"
[ -d /proc/$pid ] && fail "pod $pid survived stopping its slice" || ok "stopping the slice stops the pod"
finish

// Module deviceplugin is the e2e's own node agent: a fake device plugin
// (kubelet's deviceplugin/v1beta1 API) and a minimal CSI node plugin
// registered through kubelet's plugins_registry (pluginregistration/v1).
module github.com/numa-partition/numa-partition/test/addons/deviceplugin

go 1.26.0

require (
	github.com/container-storage-interface/spec v1.13.0
	google.golang.org/grpc v1.82.1
	k8s.io/kubelet v0.37.2
)

require (
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260526163538-3dc84a4a5aaa // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
)

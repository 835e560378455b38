// A compile-only stand-in for the Tencent Cloud VPC SDK, which flannel's
// tencentvpc backend imports but the Go module proxy here does not serve.
// The e2e uses the vxlan backend; selecting "tencent-vpc" with this build
// fails with errUnavailable.
module github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc

go 1.21

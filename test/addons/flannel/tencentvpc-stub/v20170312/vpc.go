// Package v20170312 declares the few names of the Tencent Cloud VPC API that
// flannel's tencentvpc backend uses, so that flanneld builds without the SDK.
// Every call fails: see errUnavailable.
package v20170312

import "errors"

var errUnavailable = errors.New("tencent-vpc backend: not available in this build (the SDK is a stub)")

type Client struct{}

func NewClientWithSecretId(secretID, secretKey, region string) (*Client, error) {
	return nil, errUnavailable
}

type Filter struct {
	Name   *string
	Values []*string
}

type Route struct {
	DestinationCidrBlock *string
	GatewayType          *string
	GatewayId            *string
	RouteId              *uint64
	RouteType            *string
	Enabled              *bool
}

type RouteTable struct {
	RouteTableId *string
	RouteSet     []*Route
}

type DescribeRouteTablesRequest struct{ Filters []*Filter }

type DescribeRouteTablesResponse struct {
	Response *struct{ RouteTableSet []*RouteTable }
}

func NewDescribeRouteTablesRequest() *DescribeRouteTablesRequest {
	return &DescribeRouteTablesRequest{}
}

func (*Client) DescribeRouteTables(*DescribeRouteTablesRequest) (*DescribeRouteTablesResponse, error) {
	return nil, errUnavailable
}

type DeleteRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type DeleteRoutesResponse struct{}

func NewDeleteRoutesRequest() *DeleteRoutesRequest { return &DeleteRoutesRequest{} }

func (*Client) DeleteRoutes(*DeleteRoutesRequest) (*DeleteRoutesResponse, error) {
	return nil, errUnavailable
}

type CreateRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type CreateRoutesResponse struct{}

func NewCreateRoutesRequest() *CreateRoutesRequest { return &CreateRoutesRequest{} }

func (*Client) CreateRoutes(*CreateRoutesRequest) (*CreateRoutesResponse, error) {
	return nil, errUnavailable
}

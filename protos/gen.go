// Package protos holds the code generation for the Dataform protocol buffer
// definitions that dfd exchanges with @dataform/core.
//
// The .proto files are not vendored: gen.sh fetches the pinned
// @dataform/core npm package (CORE_VERSION in gen.sh), copies its .proto
// files into a temporary directory, repairs a known defect in the shipped
// configs.proto (a missing `import "core.proto";`) and runs protoc with
// protoc-gen-go, which is a tool dependency of this module (see go.mod), so
// its version always matches google.golang.org/protobuf.
//
// The generated Go types live in package
// github.com/dfdtools/dfd/protos/dataformpb. Regenerate them with
//
//	go generate ./protos
//
// and verify that the committed code is current (CI does this) with
//
//	bash protos/check.sh
package protos

//go:generate bash gen.sh

// Package wirepb holds the generated Go types of wire.proto, the frames of
// the protocol between dfd's worker pool and `dfd worker` processes. The
// framing and the rules of the conversation are documented in package
// github.com/dfdtools/dfd/jit/wire.
//
// Regenerate with
//
//	go generate ./jit/wirepb
//
// and check that the committed code is current (CI does) with
//
//	bash jit/wirepb/check.sh
package wirepb

//go:generate bash gen.sh

package nodeworker_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

var update = flag.Bool("update", false, "rewrite worker.js's generated wire constants")

const (
	wireBegin = "// @@WIRE-BEGIN@@"
	wireEnd   = "// @@WIRE-END@@"
)

// wireConstants is the JavaScript block worker.js speaks the protocol
// with: the protocol version of package wire, the field number of every
// field of every message of wire.proto (F.<Message>.<field>, nested
// messages as F.<Outer>_<Inner>) and the values of its enums. It is made
// from wirepb's compiled descriptor, which jit/wirepb/check.sh keeps equal
// to wire.proto.
func wireConstants() string {
	var b strings.Builder
	fmt.Fprintf(&b, "const PROTOCOL_VERSION = %d;\n", wire.ProtocolVersion)
	fd := wirepb.File_wire_proto
	b.WriteString("const F = {\n")
	var messages func(prefix string, ms protoreflect.MessageDescriptors)
	messages = func(prefix string, ms protoreflect.MessageDescriptors) {
		for i := 0; i < ms.Len(); i++ {
			m := ms.Get(i)
			name := prefix + string(m.Name())
			var fs []string
			for j := 0; j < m.Fields().Len(); j++ {
				f := m.Fields().Get(j)
				fs = append(fs, fmt.Sprintf("%s: %d", f.Name(), f.Number()))
			}
			fmt.Fprintf(&b, "  %s: { %s },\n", name, strings.Join(fs, ", "))
			messages(name+"_", m.Messages())
		}
	}
	messages("", fd.Messages())
	b.WriteString("};\n")
	for i := 0; i < fd.Enums().Len(); i++ {
		e := fd.Enums().Get(i)
		var vs []string
		for j := 0; j < e.Values().Len(); j++ {
			v := e.Values().Get(j)
			vs = append(vs, fmt.Sprintf("%s: %d", v.Name(), v.Number()))
		}
		fmt.Fprintf(&b, "const %s = { %s };\n", strings.ToUpper(string(e.Name())), strings.Join(vs, ", "))
	}
	return b.String()
}

// spliceWireConstants puts block between worker.js's markers (each on a
// line of its own, the begin marker's comment going on to the next line).
func spliceWireConstants(src []byte, block string) ([]byte, error) {
	i := bytes.Index(src, []byte(wireBegin))
	j := bytes.Index(src, []byte(wireEnd))
	if i < 0 || j < i {
		return nil, fmt.Errorf("worker.js has no %s … %s block", wireBegin, wireEnd)
	}
	// The begin marker's comment runs on to the end of the next line.
	k := i
	for n := 0; n < 2; n++ {
		nl := bytes.IndexByte(src[k:], '\n')
		if nl < 0 || k+nl >= j {
			return nil, fmt.Errorf("worker.js: the line after %s must be the rest of its comment", wireBegin)
		}
		k += nl + 1
	}
	var out bytes.Buffer
	out.Write(src[:k])
	out.WriteString(block)
	out.Write(src[j:])
	return out.Bytes(), nil
}

// TestWireConstants fails when worker.js's field numbers, enum values or
// protocol version differ from wire.proto's and package wire's; -update
// rewrites them.
func TestWireConstants(t *testing.T) {
	src, err := os.ReadFile("worker.js")
	if err != nil {
		t.Fatal(err)
	}
	want, err := spliceWireConstants(src, wireConstants())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(src, want) {
		return
	}
	if *update {
		if err := os.WriteFile("worker.js", want, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote worker.js's wire constants")
		return
	}
	t.Errorf("worker.js's wire constants are stale; run: go test ./jit/nodeworker -run TestWireConstants -update\nwant:\n%s", wireConstants())
}

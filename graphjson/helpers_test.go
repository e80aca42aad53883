package graphjson

import (
	"math"
	"os"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// testdata/exotic.protoset is the compiled form of testdata/exotic.proto and
// testdata/exotic2.proto, so that the tests need no protoc. Regenerate with
// `go generate ./graphjson` after editing them (TestExoticProtosetFresh
// checks this when protoc is installed).
//
//go:generate protoc -I testdata --include_imports --descriptor_set_out=testdata/exotic.protoset exotic.proto exotic2.proto

var exoticFiles = sync.OnceValues(func() (*protoregistry.Files, error) {
	b, err := os.ReadFile("testdata/exotic.protoset")
	if err != nil {
		return nil, err
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, err
	}
	return protodesc.NewFiles(&set)
})

// desc returns the descriptor of a message by full name, from the exotic
// test schema (graphjsontest.*) or the global registry (dataform.*, WKTs).
func desc(t testing.TB, name string) protoreflect.MessageDescriptor {
	t.Helper()
	files, err := exoticFiles()
	if err != nil {
		t.Fatal(err)
	}
	var d protoreflect.Descriptor
	if protoreflect.FullName(name).Parent() == "graphjsontest" {
		d, err = files.FindDescriptorByName(protoreflect.FullName(name))
	} else {
		d, err = protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	}
	if err != nil {
		t.Fatalf("descriptor %s: %v", name, err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// w builds wire bytes by hand, so tests can express things proto.Marshal
// never produces (explicit defaults, duplicates, odd field order, packed vs
// unpacked, unknown fields, invalid UTF-8).
type w []byte

func (b w) varint(num protowire.Number, v uint64) w {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func (b w) sint(num protowire.Number, v int64) w {
	return b.varint(num, protowire.EncodeZigZag(v))
}

func (b w) fixed32(num protowire.Number, v uint32) w {
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}

func (b w) fixed64(num protowire.Number, v uint64) w {
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func (b w) float(num protowire.Number, f float32) w { return b.fixed32(num, math.Float32bits(f)) }

func (b w) double(num protowire.Number, f float64) w { return b.fixed64(num, math.Float64bits(f)) }

func (b w) bytes(num protowire.Number, v []byte) w {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func (b w) str(num protowire.Number, s string) w { return b.bytes(num, []byte(s)) }

func (b w) msg(num protowire.Number, m w) w { return b.bytes(num, m) }

func (b w) group(num protowire.Number, m w) w {
	b = protowire.AppendTag(b, num, protowire.StartGroupType)
	b = append(b, m...)
	return protowire.AppendTag(b, num, protowire.EndGroupType)
}

func (b w) raw(p ...byte) w { return append(b, p...) }

// entry builds a map entry message from key and value fields.
func entry(k, v w) w { return append(append(w{}, k...), v...) }

// packedVarints is the payload of a packed repeated varint field.
func packedVarints(vs ...uint64) []byte {
	var p []byte
	for _, v := range vs {
		p = protowire.AppendVarint(p, v)
	}
	return p
}

func mustMarshal(t testing.TB, m proto.Message) w {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

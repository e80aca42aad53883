package cache

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dfdtools/dfd/protos/dataformpb"
)

// fill sets every field of m (recursively, two levels of Field.struct) to a
// non-default value, so a clone that forgets a field is caught.
func fill(m protoreflect.Message, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && fd.Name() == "primitive" && depth > 0 {
			continue // set struct instead, below
		}
		switch {
		case fd.IsMap():
			m.Mutable(fd).Map().Set(protoreflect.ValueOfString("k").MapKey(), protoreflect.ValueOfString("v"))
		case fd.IsList():
			l := m.Mutable(fd).List()
			if fd.Kind() == protoreflect.MessageKind {
				if depth <= 0 {
					continue
				}
				e := l.NewElement()
				fill(e.Message(), depth-1)
				l.Append(e)
			} else {
				l.Append(scalar(fd))
			}
		case fd.Kind() == protoreflect.MessageKind:
			if depth <= 0 {
				continue
			}
			fill(m.Mutable(fd).Message(), depth-1)
		default:
			m.Set(fd, scalar(fd))
		}
	}
}

func scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("s-" + string(fd.Name()))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(1)
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(42)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(7)
	}
	panic("fill: add kind " + fd.Kind().String())
}

func TestCloneTableComplete(t *testing.T) {
	m := new(dataformpb.TableMetadata)
	fill(m.ProtoReflect(), 4)
	// And a primitive field beside the struct ones.
	m.Fields = append(m.Fields, &dataformpb.Field{Name: "p", Type: &dataformpb.Field_Primitive_{Primitive: dataformpb.Field_JSON}})
	c := cloneTable(m)
	if !proto.Equal(m, c) {
		t.Fatalf("cloneTable lost data:\n got %v\nwant %v", c, m)
	}
	c.Fields[0].Flags[0] = 0
	c.Labels["k"] = "changed"
	c.Target.Name = "changed"
	if proto.Equal(m, c) {
		t.Error("clone shares memory with the original")
	}
	if cloneTable(nil) != nil {
		t.Error("nil")
	}
}

func BenchmarkClone(b *testing.B) {
	be := newBackend(50)
	resp, _ := be.ListTables(context.Background(), &dataformpb.ListTablesRequest{Database: "p", Schema: "ds"})
	b.Run("proto.Clone", func(b *testing.B) {
		for b.Loop() {
			for _, t := range resp.Tables {
				proto.Clone(t)
			}
		}
	})
	b.Run("cloneTable", func(b *testing.B) {
		for b.Loop() {
			for _, t := range resp.Tables {
				cloneTable(t)
			}
		}
	})
}

package compile

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/dfdtools/dfd/internal/lastuse"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// Decoder decodes core's responses as Decode does, for one project's
// successive compiles: an action whose encoding is one the last response
// had is not decoded again, its decoded message is shared. After an edit
// nearly every action's bytes are the same, and decoding them was most
// of what the daemon did with a compile at 10,000 actions (20 ms for
// 8.8 MB).
//
// The messages a Decoder returns are therefore shared between the graphs
// of successive compiles, and must never be written to: everything
// downstream only reads a compiled graph. With Verify set (tests, through
// DFD_VERIFY_DECODE=1), every shared message is checked against a fresh
// decoding of its bytes, and a message written to since is an error.
//
// A Decoder is safe for concurrent use; its decodes run one at a time.
type Decoder struct {
	Verify bool

	mu   sync.Mutex
	kept lastuse.Memo[string, proto.Message] // an action's field, encoded → its decoded message
}

// ErrSharedWritten is the error of a Verify decode that found a shared
// message changed after it was decoded.
var ErrSharedWritten = errors.New("a decoded action shared between compiles was written to")

// Decode is the package's Decode, sharing unchanged actions' messages
// with the graph of the last call.
func (d *Decoder) Decode(resp []byte) (*Result, error) {
	graphWire, err := graphBytes(resp)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	g := &dataformpb.CompiledGraph{}
	if err := d.decodeGraph(graphWire, g); err != nil {
		return nil, err
	}
	d.kept.EndRun()
	return &Result{Graph: g, GraphWire: graphWire}, nil
}

// decodeGraph is proto.Unmarshal(b, g), with each element of a repeated
// message field (the lists of actions, tests and errors) taken from kept
// when its bytes are known. The other fields are gathered in their order
// and unmarshalled together at the end: merged into g, they are what a
// plain unmarshal gives, since none is a field decoded here.
func (d *Decoder) decodeGraph(b []byte, g *dataformpb.CompiledGraph) error {
	m := g.ProtoReflect()
	fields := m.Descriptor().Fields()
	var rest []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return decodeError(protowire.ParseError(n))
		}
		fd := fields.ByNumber(num)
		if fd == nil || !fd.IsList() || fd.Kind() != protoreflect.MessageKind || typ != protowire.BytesType {
			l := protowire.ConsumeFieldValue(num, typ, b[n:])
			if l < 0 {
				return decodeError(protowire.ParseError(l))
			}
			rest = append(rest, b[:n+l]...)
			b = b[n+l:]
			continue
		}
		v, l := protowire.ConsumeBytes(b[n:])
		if l < 0 {
			return decodeError(protowire.ParseError(l))
		}
		// Kept by the field's whole encoding: the same bytes may be a
		// message of another type in another field.
		field := b[:n+l]
		b = b[n+l:]
		list := m.Mutable(fd).List()
		if msg, ok := d.kept.Get(string(field)); ok {
			if d.Verify {
				if err := sameAsDecoded(msg, v); err != nil {
					return err
				}
			}
			list.Append(protoreflect.ValueOfMessage(msg.ProtoReflect()))
			continue
		}
		elem := list.NewElement()
		if err := proto.Unmarshal(v, elem.Message().Interface()); err != nil {
			return decodeError(err)
		}
		list.Append(elem)
		d.kept.Put(string(field), elem.Message().Interface())
	}
	if len(rest) > 0 {
		if err := (proto.UnmarshalOptions{Merge: true}).Unmarshal(rest, g); err != nil {
			return decodeError(err)
		}
	}
	return nil
}

// sameAsDecoded checks that msg is still what its encoding v decodes to.
func sameAsDecoded(msg proto.Message, v []byte) error {
	fresh := msg.ProtoReflect().New().Interface()
	if err := proto.Unmarshal(v, fresh); err != nil {
		return decodeError(err)
	}
	if !proto.Equal(fresh, msg) {
		return fmt.Errorf("%w (a %s)", ErrSharedWritten, msg.ProtoReflect().Descriptor().Name())
	}
	return nil
}

func decodeError(err error) error {
	return fmt.Errorf("decoding the compiled graph: %w", err)
}

// Package graphjson renders protobuf wire bytes as JSON exactly the way the
// Dataform CLI prints them with `dataform compile --json`.
//
// The CLI decodes the wire bytes produced by @dataform/core with
// protobufjs-generated (pbjs static) code and prints
//
//	JSON.stringify(dataform.CompiledGraph.create(decoded), null, 4) + "\n"
//
// where the message's toJSON() is protobufjs'
// toObject(m, {longs: String, enums: String, bytes: String, json: true}).
// Go's protojson output differs from that in many ways, and proto.Unmarshal
// loses information the CLI prints (whether a proto3 scalar equal to its
// default was present on the wire), so this package walks the raw wire bytes
// itself, guided only by a message descriptor. The rules it reproduces:
//
//   - A field is printed iff it occurs on the wire (explicit proto3 defaults
//     such as `disabled: false` included); repeated fields and maps only if
//     they end up non-empty.
//   - Keys are protobufjs property names (util.camelCase of the proto field
//     name, see pbjsFieldName), in ascending field-number order: pbjs'
//     generated toObject visits fields sorted by id (converter.js
//     `fieldsArray.slice().sort(util.compareFieldsById)`; the static code in
//     the CLI bundle, e.g. CompiledGraph.toObject and Table.toObject, has the
//     same order). The "arrays first, then maps, then scalars" grouping seen
//     at the top of those functions only applies with options.defaults or
//     options.arrays, which toJSON does not set.
//   - 64-bit integers are decimal strings; 32-bit integers are numbers; bool
//     is true/false; enums print the value name (for aliases the first
//     declared name), or the number if
//     it is unknown; bytes are standard padded base64; float and double are
//     JS numbers (ECMAScript Number::toString, float widened to double
//     first) and NaN/±Infinity are the strings "NaN", "Infinity",
//     "-Infinity".
//   - No special cases for well-known types: Struct prints as
//     {"fields": {"k": {"stringValue": "v"}}}, Timestamp as
//     {"seconds": "1", "nanos": 2}.
//   - Repeated scalars accept packed and unpacked encodings. A singular
//     message field seen twice is replaced by the last one (no merging);
//     scalars: last wins. oneof members are ordinary fields (no virtual
//     oneof-name property). Unknown field numbers are skipped.
//   - Maps print as objects whose key order follows JS property order:
//     array-index keys ("0" … "4294967294" in canonical form) first in
//     ascending numeric order, then the other keys in first-insertion order; a
//     repeated key keeps its first position and takes the last value.
//     Non-string keys are converted as protobufjs does: 32-bit integers to
//     decimal, bool to "true"/"false", and 64-bit integers (read as Long) to
//     util.longToHash's 8-character string of the little-endian bytes (an
//     absent 64-bit key is the number 0, i.e. "0"). Dataform's own maps all
//     have string keys.
//   - Strings are decoded like protobufjs' utf8.read (lenient; see
//     pbjsDecodeUTF8) and escaped like JSON.stringify.
//
// Known divergences, all on malformed or non-canonical input that no
// protobuf encoder (protobufjs, which @dataform/core uses, or Go) produces:
//
//   - a message-valued map entry without a value makes protobufjs' toObject
//     throw; we print {};
//   - a known field whose wire type does not match its declaration is
//     misread by protobufjs (it dispatches on the field number only); we
//     return an error;
//   - protobufjs reads a 32-bit varint as "5 bytes, then skip 5 more", so a
//     6-9 byte (non-canonical) varint in an int32/uint32/sint32/bool/enum
//     field desynchronises it; we decode it per the protobuf spec (low 32
//     bits);
//   - truncated or otherwise invalid wire data: protobufjs throws (or, in
//     some cases, reads garbage); we return an error naming the field path;
//   - nesting deeper than protobufjs' recursion limit (100) is an error in
//     both, but the CLI decodes a CompiledGraph one level below
//     CoreExecutionResponse, so its limit for graph contents is one less.
package graphjson

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Registers the dataform.* descriptors for MarshalName.
	_ "github.com/dfdtools/dfd/protos/dataformpb"
)

// MaxDepth is the maximum message nesting depth (the top-level message has
// depth 0), protobufjs' util.recursionLimit.
const MaxDepth = 100

// Marshal renders wire-format bytes of message md the way the Dataform CLI
// prints it: JSON.stringify(message, null, 4) followed by a newline.
func Marshal(md protoreflect.MessageDescriptor, wire []byte) ([]byte, error) {
	// Indented JSON is typically 4-5x the size of the wire bytes.
	out, err := AppendIndent(make([]byte, 0, 5*len(wire)+64), md, wire, 0)
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// MarshalName is Marshal for the message type with the given full name (for
// example "dataform.CompiledGraph") looked up in protoregistry.GlobalFiles,
// which holds at least all dataform.* messages.
func MarshalName(name protoreflect.FullName, wire []byte) ([]byte, error) {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil, fmt.Errorf("graphjson: %v", err)
	}
	md, ok := d.(protoreflect.MessageDescriptor)
	if !ok {
		return nil, fmt.Errorf("graphjson: %s is not a message", name)
	}
	return Marshal(md, wire)
}

// AppendIndent appends the JSON object for wire-format bytes of message md to
// dst, formatted as by JSON.stringify(message, null, 4) for a value nested
// level levels deep: lines after the first are indented by 4*(level+1)
// spaces (4*level for the closing brace); the first line is not indented and
// no newline is appended. On error dst is returned unchanged along with an
// error naming the offending field path.
func AppendIndent(dst []byte, md protoreflect.MessageDescriptor, wire []byte, level int) ([]byte, error) {
	e := encoder{buf: dst, root: string(md.FullName())}
	if err := e.message(infoFor(md), wire, 0, level); err != nil {
		return dst, err
	}
	return e.buf, nil
}

// ---------------------------------------------------------------------------
// Descriptor-derived tables, cached per message descriptor.

type msgInfo struct {
	md     protoreflect.MessageDescriptor
	fields []fieldInfo // sorted by field number
	dense  []int32     // field number -> index+1, for small numbers
	sparse map[protowire.Number]int32
}

type fieldInfo struct {
	num      protowire.Number
	name     string // pbjs property name, for error paths
	key      []byte // `"name": `
	kind     protoreflect.Kind
	wt       protowire.Type // wire type of one (unpacked) value
	list     bool
	packable bool
	isMap    bool
	msg      protoreflect.MessageDescriptor // message and group kinds
	enum     *enumInfo
	mapKey   *fieldInfo
	mapVal   *fieldInfo
}

type enumInfo struct {
	names map[int32][]byte // number -> quoted name (first declared wins)
}

var (
	msgCache  sync.Map // protoreflect.MessageDescriptor -> *msgInfo
	enumCache sync.Map // protoreflect.EnumDescriptor -> *enumInfo
)

func infoFor(md protoreflect.MessageDescriptor) *msgInfo {
	if mi, ok := msgCache.Load(md); ok {
		return mi.(*msgInfo)
	}
	fds := md.Fields()
	mi := &msgInfo{md: md, fields: make([]fieldInfo, fds.Len())}
	for i := range fds.Len() {
		mi.fields[i] = newFieldInfo(fds.Get(i))
	}
	slices.SortFunc(mi.fields, func(a, b fieldInfo) int { return int(a.num) - int(b.num) })
	if n := len(mi.fields); n > 0 && mi.fields[n-1].num <= 1024 {
		mi.dense = make([]int32, mi.fields[n-1].num+1)
		for i, f := range mi.fields {
			mi.dense[f.num] = int32(i + 1)
		}
	} else {
		mi.sparse = make(map[protowire.Number]int32, n)
		for i, f := range mi.fields {
			mi.sparse[f.num] = int32(i + 1)
		}
	}
	actual, _ := msgCache.LoadOrStore(md, mi)
	return actual.(*msgInfo)
}

// lookup returns the index of field num in mi.fields, or -1.
func (mi *msgInfo) lookup(num protowire.Number) int {
	if mi.dense != nil {
		if int(num) < len(mi.dense) {
			return int(mi.dense[num]) - 1
		}
		return -1
	}
	return int(mi.sparse[num]) - 1
}

func newFieldInfo(fd protoreflect.FieldDescriptor) fieldInfo {
	name := pbjsFieldName(string(fd.Name()))
	f := fieldInfo{
		num:   fd.Number(),
		name:  name,
		key:   append(appendQuotedUTF8(nil, []byte(name)), ':', ' '),
		kind:  fd.Kind(),
		list:  fd.IsList(),
		isMap: fd.IsMap(),
	}
	switch f.kind {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		f.wt = protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		f.wt = protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		f.wt = protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		f.wt = protowire.BytesType
	case protoreflect.GroupKind:
		f.wt = protowire.StartGroupType
	}
	f.packable = f.list && f.wt != protowire.BytesType && f.wt != protowire.StartGroupType
	if f.kind == protoreflect.MessageKind || f.kind == protoreflect.GroupKind {
		f.msg = fd.Message()
	}
	if f.kind == protoreflect.EnumKind {
		f.enum = enumInfoFor(fd.Enum())
	}
	if f.isMap {
		k, v := newFieldInfo(fd.MapKey()), newFieldInfo(fd.MapValue())
		f.mapKey, f.mapVal = &k, &v
	}
	return f
}

func enumInfoFor(ed protoreflect.EnumDescriptor) *enumInfo {
	if ei, ok := enumCache.Load(ed); ok {
		return ei.(*enumInfo)
	}
	vals := ed.Values()
	ei := &enumInfo{names: make(map[int32][]byte, vals.Len())}
	for i := range vals.Len() {
		v := vals.Get(i)
		// With allow_alias the first declared name for a number wins, in
		// pbjs static code (protobufjs-cli targets/static.js only sets
		// valuesById for the first name) and in reflection (Enum.add).
		if _, dup := ei.names[int32(v.Number())]; !dup {
			ei.names[int32(v.Number())] = appendQuotedUTF8(nil, []byte(v.Name()))
		}
	}
	actual, _ := enumCache.LoadOrStore(ed, ei)
	return actual.(*enumInfo)
}

// ---------------------------------------------------------------------------
// Wire walking and JSON writing.

// occ is one occurrence of a known field on the wire.
type occ struct {
	fi int32          // index into msgInfo.fields
	wt protowire.Type // wire type as encoded
	x  uint64         // varint / fixed value
	b  []byte         // length-delimited payload or group body
}

type pathElem struct {
	name  string
	index int    // >= 0: list index
	key   []byte // non-nil: quoted map key
}

type encoder struct {
	buf  []byte
	root string
	path []pathElem
	occs [][]occ // scratch per depth
}

func (e *encoder) errorf(format string, args ...any) error {
	var sb strings.Builder
	sb.WriteString(e.root)
	for _, p := range e.path {
		if p.name != "" {
			sb.WriteByte('.')
			sb.WriteString(p.name)
		}
		if p.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(p.index))
			sb.WriteByte(']')
		}
		if p.key != nil {
			sb.WriteByte('[')
			sb.Write(p.key)
			sb.WriteByte(']')
		}
	}
	return fmt.Errorf("graphjson: %s: %s", sb.String(), fmt.Sprintf(format, args...))
}

func (e *encoder) push(p pathElem) { e.path = append(e.path, p) }
func (e *encoder) pop()            { e.path = e.path[:len(e.path)-1] }

const spaces = "                                                                "

func (e *encoder) newline(level int) {
	e.buf = append(e.buf, '\n')
	for n := 4 * level; n > 0; {
		k := min(n, len(spaces))
		e.buf = append(e.buf, spaces[:k]...)
		n -= k
	}
}

// consumeField reads one field value of wire type wt from b.
func consumeField(num protowire.Number, wt protowire.Type, b []byte) (o occ, n int) {
	o.wt = wt
	switch wt {
	case protowire.VarintType:
		o.x, n = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(b)
		o.x = uint64(v)
	case protowire.Fixed64Type:
		o.x, n = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		o.b, n = protowire.ConsumeBytes(b)
	case protowire.StartGroupType:
		o.b, n = protowire.ConsumeGroup(num, b)
	default:
		n = protowire.ConsumeFieldValue(num, wt, b)
		if n >= 0 {
			n = -1 // unreachable: end-group and reserved types always fail
		}
	}
	return o, n
}

func wireErr(n int) error {
	if err := protowire.ParseError(n); err != nil {
		return err
	}
	return fmt.Errorf("invalid wire data")
}

// parse splits message bytes into occurrences of known fields, validating
// the wire format. The result is ordered by field number, stable.
func (e *encoder) parse(mi *msgInfo, b []byte, depth int) ([]occ, error) {
	for len(e.occs) <= depth {
		e.occs = append(e.occs, nil)
	}
	occs := e.occs[depth][:0]
	sorted := true
	for len(b) > 0 {
		num, wt, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, e.errorf("invalid field tag: %v", wireErr(n))
		}
		b = b[n:]
		fi := mi.lookup(num)
		o, n := consumeField(num, wt, b)
		if n < 0 {
			if fi >= 0 {
				return nil, e.errorf("field %s (%d): %v", mi.fields[fi].name, num, wireErr(n))
			}
			return nil, e.errorf("unknown field %d: %v", num, wireErr(n))
		}
		b = b[n:]
		if fi < 0 {
			continue // unknown field: skipped, like protobufjs' skipType
		}
		f := &mi.fields[fi]
		if wt != f.wt && !(f.packable && wt == protowire.BytesType) {
			return nil, e.errorf("field %s (%d): wire type %d, want %d", f.name, num, wt, f.wt)
		}
		o.fi = int32(fi)
		if len(occs) > 0 && occs[len(occs)-1].fi > o.fi {
			sorted = false
		}
		occs = append(occs, o)
	}
	if !sorted {
		slices.SortStableFunc(occs, func(a, b occ) int { return int(a.fi) - int(b.fi) })
	}
	e.occs[depth] = occs
	return occs, nil
}

// message appends the JSON object for message bytes b. level is the
// indentation level of the line holding the opening brace.
func (e *encoder) message(mi *msgInfo, b []byte, depth, level int) error {
	if depth > MaxDepth {
		return e.errorf("maximum nesting depth exceeded")
	}
	occs, err := e.parse(mi, b, depth)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	empty := true
	for i := 0; i < len(occs); {
		j := i + 1
		for j < len(occs) && occs[j].fi == occs[i].fi {
			j++
		}
		f := &mi.fields[occs[i].fi]
		mark, wasEmpty := len(e.buf), empty
		// Field header; dropped again below if nothing gets printed.
		if !empty {
			e.buf = append(e.buf, ',')
		}
		e.newline(level + 1)
		e.buf = append(e.buf, f.key...)
		empty = false
		e.push(pathElem{name: f.name, index: -1})
		var printed bool
		switch {
		case f.isMap:
			printed, err = e.mapField(f, occs[i:j], depth, level+1)
		case f.list:
			printed, err = e.listField(f, occs[i:j], depth, level+1)
		default:
			printed, err = true, e.singular(f, occs[i:j], depth, level+1)
		}
		e.pop()
		if err != nil {
			return err
		}
		if !printed {
			e.buf, empty = e.buf[:mark], wasEmpty
		}
		i = j
	}
	if empty {
		e.buf = append(e.buf, '}')
	} else {
		e.newline(level)
		e.buf = append(e.buf, '}')
	}
	return nil
}

// singular appends the value of a non-repeated field from its occurrences.
// Scalars: the last one wins. Messages: each occurrence replaces the previous
// one (protobufjs decodes each and keeps the last; it does not merge), so the
// earlier ones are decoded only to surface their errors.
func (e *encoder) singular(f *fieldInfo, run []occ, depth, level int) error {
	if f.msg != nil {
		mi := infoFor(f.msg)
		for _, o := range run[:len(run)-1] {
			mark := len(e.buf)
			err := e.message(mi, o.b, depth+1, level)
			e.buf = e.buf[:mark]
			if err != nil {
				return err
			}
		}
		return e.message(mi, run[len(run)-1].b, depth+1, level)
	}
	last := run[len(run)-1]
	e.buf = appendScalar(e.buf, f, last.x, last.b)
	return nil
}

// listField appends a repeated field as a JSON array. It reports false if the
// list turned out empty (only possible with empty packed payloads).
func (e *encoder) listField(f *fieldInfo, run []occ, depth, level int) (bool, error) {
	e.buf = append(e.buf, '[')
	n := 0
	elem := func() {
		if n > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(level + 1)
		n++
	}
	var mi *msgInfo
	if f.msg != nil {
		mi = infoFor(f.msg)
	}
	for _, o := range run {
		if mi != nil {
			elem()
			e.path[len(e.path)-1].index = n - 1
			if err := e.message(mi, o.b, depth+1, level+1); err != nil {
				return false, err
			}
			continue
		}
		if o.wt != protowire.BytesType || !f.packable {
			elem()
			e.buf = appendScalar(e.buf, f, o.x, o.b)
			continue
		}
		// Packed.
		for p := o.b; len(p) > 0; {
			v, k := consumeField(f.num, f.wt, p)
			if k < 0 {
				e.path[len(e.path)-1].index = n
				return false, e.errorf("packed element: %v", wireErr(k))
			}
			p = p[k:]
			elem()
			e.buf = appendScalar(e.buf, f, v.x, nil)
		}
	}
	if n == 0 {
		return false, nil
	}
	e.newline(level)
	e.buf = append(e.buf, ']')
	return true, nil
}

// mapEntry is one distinct key of a map field.
type mapEntry struct {
	key   []byte // quoted JSON key
	index uint32 // valid if isIdx
	isIdx bool
	val   occ
	has   bool // value present on the wire
}

// mapField appends a map field as a JSON object in JS property order.
func (e *encoder) mapField(f *fieldInfo, run []occ, depth, level int) (bool, error) {
	kf, vf := f.mapKey, f.mapVal
	var vmi *msgInfo
	if vf.msg != nil {
		vmi = infoFor(vf.msg)
	}
	entries := make([]mapEntry, 0, len(run))
	var seen map[string]int
	if len(run) > 1 {
		seen = make(map[string]int, len(run))
	}
	for _, o := range run {
		var key, val occ
		hasKey, hasVal := false, false
		for b := o.b; len(b) > 0; {
			num, wt, n := protowire.ConsumeTag(b)
			if n < 0 {
				return false, e.errorf("map entry: invalid field tag: %v", wireErr(n))
			}
			b = b[n:]
			v, n := consumeField(num, wt, b)
			if n < 0 {
				return false, e.errorf("map entry field %d: %v", num, wireErr(n))
			}
			b = b[n:]
			var target *fieldInfo
			switch num {
			case 1:
				target = kf
			case 2:
				target = vf
			default:
				continue
			}
			if wt != target.wt {
				return false, e.errorf("map entry field %d: wire type %d, want %d", num, wt, target.wt)
			}
			if num == 1 {
				key, hasKey = v, true
				continue
			}
			if hasVal && vmi != nil {
				// Replaced value message: decoded (and dropped) by protobufjs.
				if err := e.discardMessage(vmi, val.b, depth+1); err != nil {
					return false, err
				}
			}
			val, hasVal = v, true
		}
		ent := mapEntry{val: val, has: hasVal}
		ent.key, ent.index, ent.isIdx = mapKey(kf, key, hasKey)
		if seen != nil {
			if at, ok := seen[string(ent.key)]; ok {
				// JS: the property keeps its position, the value is replaced.
				if prev := entries[at]; prev.has && vmi != nil {
					e.push(pathElem{key: prev.key, index: -1})
					err := e.discardMessage(vmi, prev.val.b, depth+1)
					e.pop()
					if err != nil {
						return false, err
					}
				}
				entries[at].val, entries[at].has = ent.val, ent.has
				continue
			}
			seen[string(ent.key)] = len(entries)
		}
		entries = append(entries, ent)
	}
	// JS property order: array indices ascending, then insertion order.
	slices.SortStableFunc(entries, func(a, b mapEntry) int {
		switch {
		case a.isIdx && b.isIdx:
			if a.index < b.index {
				return -1
			}
			if a.index > b.index {
				return 1
			}
			return 0
		case a.isIdx:
			return -1
		case b.isIdx:
			return 1
		}
		return 0
	})
	e.buf = append(e.buf, '{')
	for i, ent := range entries {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.newline(level + 1)
		e.buf = append(e.buf, ent.key...)
		e.buf = append(e.buf, ':', ' ')
		switch {
		case vmi != nil && ent.has:
			e.push(pathElem{key: ent.key, index: -1})
			err := e.message(vmi, ent.val.b, depth+1, level+1)
			e.pop()
			if err != nil {
				return false, err
			}
		case vmi != nil:
			// protobufjs would call toObject(null) here and throw.
			e.buf = append(e.buf, '{', '}')
		default:
			// An absent value is the type's default (0, "", false, ...).
			e.buf = appendScalar(e.buf, vf, ent.val.x, ent.val.b)
		}
	}
	if len(entries) > 0 {
		e.newline(level)
	}
	e.buf = append(e.buf, '}')
	return len(entries) > 0, nil
}

func (e *encoder) discardMessage(mi *msgInfo, b []byte, depth int) error {
	mark := len(e.buf)
	err := e.message(mi, b, depth, 0)
	e.buf = e.buf[:mark]
	return err
}

// mapKey returns the quoted JS property name protobufjs uses for a map key,
// and whether it is an array index (and which).
func mapKey(kf *fieldInfo, o occ, present bool) (key []byte, index uint32, isIdx bool) {
	var s string
	switch kf.kind {
	case protoreflect.StringKind:
		key = appendProtoString(nil, o.b)
		// Array indices are ASCII digits, which are valid UTF-8, so the
		// quoted form holds the key text verbatim.
		index, isIdx = arrayIndex(string(key[1 : len(key)-1]))
		return key, index, isIdx
	case protoreflect.BoolKind:
		s = strconv.FormatBool(uint32(o.x) != 0)
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind:
		s = strconv.FormatInt(int64(int32(uint32(o.x))), 10)
	case protoreflect.Sint32Kind:
		s = strconv.FormatInt(int64(zigzag32(o.x)), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		s = strconv.FormatUint(uint64(uint32(o.x)), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind,
		protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		if !present {
			s = "0" // the decoder's default key is the number 0
			break
		}
		// protobufjs reads a Long and uses util.longToHash(key) as the
		// property name: 8 chars, the little-endian bytes of the value.
		x := o.x
		if kf.kind == protoreflect.Sint64Kind {
			x = uint64(protowire.DecodeZigZag(x))
		}
		u := make([]uint16, 8)
		for i := range u {
			u[i] = uint16(byte(x >> (8 * i)))
		}
		key = appendQuotedUnits(nil, u)
		var ascii [8]byte
		for i, c := range u {
			ascii[i] = byte(c)
		}
		index, isIdx = arrayIndex(string(ascii[:]))
		return key, index, isIdx
	}
	index, isIdx = arrayIndex(s)
	return appendQuotedUTF8(nil, []byte(s)), index, isIdx
}

// arrayIndex reports whether s is an ECMAScript array index: the canonical
// decimal form of an integer in [0, 2^32-2]. Such property keys are
// enumerated first, in ascending numeric order.
func arrayIndex(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 10 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > math.MaxUint32-1 {
		return 0, false
	}
	return uint32(v), true
}

func zigzag32(x uint64) int32 {
	u := uint32(x)
	return int32(u>>1) ^ -int32(u&1)
}

// appendScalar appends a non-message value: x holds varint/fixed values, b
// the payload of string/bytes values (an absent map value is all zero).
// Integer conversions follow protobufjs' Reader: 32-bit reads use the low 32
// bits of the varint, bool is "low 32 bits != 0".
func appendScalar(dst []byte, f *fieldInfo, x uint64, b []byte) []byte {
	switch f.kind {
	case protoreflect.BoolKind:
		if uint32(x) != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case protoreflect.EnumKind:
		v := int32(uint32(x))
		if name, ok := f.enum.names[v]; ok {
			return append(dst, name...)
		}
		return strconv.AppendInt(dst, int64(v), 10)
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind:
		return strconv.AppendInt(dst, int64(int32(uint32(x))), 10)
	case protoreflect.Sint32Kind:
		return strconv.AppendInt(dst, int64(zigzag32(x)), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return strconv.AppendUint(dst, uint64(uint32(x)), 10)
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, int64(x), 10)
		return append(dst, '"')
	case protoreflect.Sint64Kind:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, protowire.DecodeZigZag(x), 10)
		return append(dst, '"')
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		dst = append(dst, '"')
		dst = strconv.AppendUint(dst, x, 10)
		return append(dst, '"')
	case protoreflect.FloatKind:
		return appendJSDouble(dst, float64(math.Float32frombits(uint32(x))))
	case protoreflect.DoubleKind:
		return appendJSDouble(dst, math.Float64frombits(x))
	case protoreflect.StringKind:
		return appendProtoString(dst, b)
	case protoreflect.BytesKind:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, b)
		return append(dst, '"')
	}
	panic(fmt.Sprintf("graphjson: unexpected kind %v", f.kind))
}

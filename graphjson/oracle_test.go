package graphjson

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestOracle compares Marshal with what the Dataform CLI itself prints, by
// decoding the same bytes with protobufjs in Node (testdata/oracle.js):
//
//   - for dataform.* and google.protobuf.* types with the pbjs static code
//     embedded in the CLI bundle (the code `dataform compile --json` runs);
//   - for the test-only graphjsontest.* types with protobufjs reflection
//     (protobuf.loadSync), the same runtime and conversion rules.
//
// Where both are available they must agree too. Inputs: every non-error case
// of TestMarshal, a realistic graph, and a few thousand random messages with
// shuffled, duplicated, packed/unpacked and unknown fields.
//
// Needs node; the CLI and core come from testenv (installed into the cache
// on first use). Without them the test fails: CI must run it.
func TestOracle(t *testing.T) {
	node := testenv.Node(t)
	// .../node_modules/@dataform/cli → .../node_modules
	nm := filepath.Dir(filepath.Dir(testenv.NPMPackage(t, "@dataform/cli@"+testenv.CLIVersion)))
	if _, err := os.Stat(filepath.Join(nm, "protobufjs", "package.json")); err != nil {
		t.Fatalf("the CLI's protobufjs is not where the oracle looks: %v", err)
	}
	protos := []string{abs(t, "testdata/exotic.proto"), abs(t, "testdata/exotic2.proto")}
	coreDir := testenv.CoreDir(t, testenv.CoreVersion)
	for _, f := range []string{"core.proto", "configs.proto", "extension.proto", "db_adapter.proto", "jit.proto"} {
		protos = append(protos, filepath.Join(coreDir, f))
	}

	type ocase struct {
		name, typ string
		wire      []byte
	}
	var all []ocase
	for _, c := range cases(t) {
		if c.wantErr == "" {
			all = append(all, ocase{c.name, c.typ, c.wire})
		}
	}
	all = append(all, ocase{"realistic graph", "dataform.CompiledGraph", benchGraph(t, 40)})
	// GRAPHJSON_ORACLE_RANDOM=n raises the number of random messages per type.
	perType := 150
	if n, err := strconv.Atoi(os.Getenv("GRAPHJSON_ORACLE_RANDOM")); err == nil && n > 0 {
		perType = n
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range []string{
		"graphjsontest.Scalars", "graphjsontest.Lists", "graphjsontest.Maps", "graphjsontest.Names",
		"graphjsontest.Wkt", "graphjsontest.Order", "graphjsontest.P2", "graphjsontest.Deep",
		"dataform.CompiledGraph", "dataform.Table", "dataform.ActionConfig", "dataform.WorkflowSettings",
		"dataform.JitCompilationRequest", "dataform.JitCompilationResponse", "dataform.ExecuteRequest",
		"dataform.TableMetadata", "google.protobuf.Struct", "google.protobuf.Timestamp",
	} {
		md := desc(t, typ)
		for i := range perType {
			g := &gen{r: r}
			all = append(all, ocase{fmt.Sprintf("random %s #%d", typ, i), typ, g.message(md, 0)})
		}
	}

	type reqCase struct {
		Type string `json:"type"`
		B64  string `json:"b64"`
	}
	req := struct {
		Protos []string  `json:"protos"`
		Cases  []reqCase `json:"cases"`
	}{Protos: protos}
	for _, c := range all {
		req.Cases = append(req.Cases, reqCase{c.typ, base64.StdEncoding.EncodeToString(c.wire)})
	}
	reqFile := filepath.Join(t.TempDir(), "req.json")
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reqFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/oracle.js", nm, reqFile)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node oracle.js: %v", err)
	}
	var res []struct {
		Static     *string `json:"static"`
		StaticErr  string  `json:"staticErr"`
		Reflect    *string `json:"reflect"`
		ReflectErr string  `json:"reflectErr"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res) != len(all) {
		t.Fatalf("oracle returned %d results for %d cases", len(res), len(all))
	}
	dec := func(s *string) string {
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var nStatic, nReflect, nBoth int
	for i, c := range all {
		rr := res[i]
		got, err := Marshal(desc(t, c.typ), c.wire)
		if err != nil {
			t.Errorf("%s: Marshal: %v (protobufjs: static err %q, reflect err %q)", c.name, err, rr.StaticErr, rr.ReflectErr)
			continue
		}
		var want, from string
		switch {
		case rr.Static != nil:
			want, from = dec(rr.Static), "pbjs static code"
			nStatic++
		case rr.Reflect != nil:
			want, from = dec(rr.Reflect), "protobufjs reflection"
			nReflect++
		default:
			t.Errorf("%s: protobufjs failed: static %q, reflect %q", c.name, rr.StaticErr, rr.ReflectErr)
			continue
		}
		if rr.Static != nil && rr.Reflect != nil {
			nBoth++
			if s, r := dec(rr.Static), dec(rr.Reflect); s != r {
				t.Errorf("%s: pbjs static and reflection disagree:\nstatic:\n%s\nreflect:\n%s", c.name, s, r)
			}
		}
		if string(got) != want {
			t.Errorf("%s (%s, wire %x): mismatch with %s\n%s", c.name, c.typ, c.wire, from, diff(want, string(got)))
		}
	}
	t.Logf("%d cases: %d checked against pbjs static code (%d of them also against reflection), %d against reflection only",
		len(all), nStatic, nBoth, nReflect)
}

func abs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// diff shows the first differing line of want and got.
func diff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var a, b string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			b = gl[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q\nfull want:\n%s\nfull got:\n%s", i+1, a, b, want, got)
		}
	}
	return "(equal?)"
}

// gen produces random wire bytes for a message type: a random subset of the
// fields in random order, duplicates, packed and unpacked repeated scalars,
// map entries with colliding and index-like keys, missing map keys/values,
// unknown fields, and awkward scalar values (NaN, -0, extremes, random bit
// patterns, invalid UTF-8).
type gen struct{ r *rand.Rand }

func (g *gen) message(md protoreflect.MessageDescriptor, depth int) w {
	var chunks []w
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if g.r.IntN(10) < 5 {
			continue
		}
		n := 1
		if fd.IsList() || fd.IsMap() {
			n = 1 + g.r.IntN(4)
		} else if g.r.IntN(6) == 0 {
			n = 2 // duplicate singular field
		}
		for range n {
			chunks = append(chunks, g.field(fd, depth))
		}
	}
	for g.r.IntN(5) == 0 {
		chunks = append(chunks, g.unknown())
	}
	g.r.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
	var out w
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out
}

func (g *gen) unknown() w {
	num := protowire.Number(5000 + g.r.IntN(100))
	switch g.r.IntN(5) {
	case 0:
		return w{}.varint(num, g.r.Uint64())
	case 1:
		return w{}.fixed32(num, g.r.Uint32())
	case 2:
		return w{}.fixed64(num, g.r.Uint64())
	case 3:
		return w{}.str(num, g.str())
	}
	return w{}.group(num, w{}.varint(1, 1).str(2, "x"))
}

func (g *gen) field(fd protoreflect.FieldDescriptor, depth int) w {
	num := fd.Number()
	if fd.IsMap() {
		var e w
		if g.r.IntN(8) != 0 {
			e = append(e, g.mapKey(fd.MapKey())...)
		}
		if g.r.IntN(8) != 0 && !(fd.MapValue().Message() != nil && depth >= 4) {
			e = append(e, g.single(fd.MapValue(), 2, depth)...)
		} else if fd.MapValue().Message() != nil {
			e = append(e, w{}.msg(2, nil)...) // protobufjs cannot print a missing message value
		}
		if g.r.IntN(6) == 0 {
			e = append(w{}.varint(3, 1), e...) // unknown entry field
		}
		return w{}.msg(num, e)
	}
	if fd.IsList() && g.r.IntN(2) == 0 {
		if wt := wireType(fd.Kind()); wt != protowire.BytesType && wt != protowire.StartGroupType {
			var p w
			for range g.r.IntN(4) {
				p = append(p, g.scalarPayload(fd)...)
			}
			return w{}.bytes(num, p)
		}
	}
	return g.single(fd, num, depth)
}

func (g *gen) mapKey(fd protoreflect.FieldDescriptor) w {
	if fd.Kind() == protoreflect.StringKind {
		keys := []string{"a", "b", "", "0", "1", "7", "10", "01", "-1", "4294967294", "4294967295", "__proto__", "ü", "\x80x"}
		return w{}.str(1, keys[g.r.IntN(len(keys))])
	}
	return g.single(fd, 1, 0)
}

// single encodes one value of fd (ignoring cardinality) as field num.
func (g *gen) single(fd protoreflect.FieldDescriptor, num protowire.Number, depth int) w {
	switch fd.Kind() {
	case protoreflect.MessageKind:
		if depth >= 4 {
			return w{}.msg(num, nil)
		}
		return w{}.msg(num, g.message(fd.Message(), depth+1))
	case protoreflect.GroupKind:
		if depth >= 4 {
			return w{}.group(num, nil)
		}
		return w{}.group(num, g.message(fd.Message(), depth+1))
	case protoreflect.StringKind:
		return w{}.str(num, g.str())
	case protoreflect.BytesKind:
		b := make([]byte, g.r.IntN(7))
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return w{}.bytes(num, b)
	}
	b := protowire.AppendTag(nil, num, wireType(fd.Kind()))
	return append(b, g.scalarPayload(fd)...)
}

func (g *gen) scalarPayload(fd protoreflect.FieldDescriptor) []byte {
	switch wireType(fd.Kind()) {
	case protowire.VarintType:
		var v uint64
		switch g.r.IntN(7) {
		case 0:
			v = 0
		case 1:
			v = uint64(g.r.IntN(4))
		case 2:
			v = math.MaxUint64
		case 3:
			v = 1 << 63
		case 4:
			v = uint64(g.r.Uint32())
		case 5:
			v = uint64(math.MaxInt64)
		default:
			v = g.r.Uint64() >> g.r.IntN(64)
		}
		switch fd.Kind() {
		case protoreflect.Int32Kind, protoreflect.EnumKind:
			// Real encoders sign-extend int32 to 10 bytes. protobufjs reads
			// 32-bit varints as "5 bytes, then skip 5 more", so it misreads
			// non-canonical 6-9 byte encodings; never generate those.
			v = uint64(int64(int32(v)))
		case protoreflect.Uint32Kind, protoreflect.Sint32Kind, protoreflect.BoolKind:
			v = uint64(uint32(v))
		}
		return protowire.AppendVarint(nil, v)
	case protowire.Fixed32Type:
		vals := []float32{0, float32(math.Copysign(0, -1)), 0.1, 1, -2.5, 3.4028235e38, 1e-45, float32(math.NaN()), float32(math.Inf(-1)), 16777217}
		if fd.Kind() == protoreflect.FloatKind && g.r.IntN(2) == 0 {
			return protowire.AppendFixed32(nil, math.Float32bits(vals[g.r.IntN(len(vals))]))
		}
		return protowire.AppendFixed32(nil, g.r.Uint32())
	default:
		vals := []float64{0, math.Copysign(0, -1), 0.1, 1e21, 1e20, 1.5e-7, 1e-6, 1e-7, 5e-324, math.MaxFloat64,
			math.NaN(), math.Inf(1), math.Inf(-1), 123456789.123, -1, 9007199254740993, 2.2250738585072014e-308}
		if fd.Kind() == protoreflect.DoubleKind && g.r.IntN(2) == 0 {
			return protowire.AppendFixed64(nil, math.Float64bits(vals[g.r.IntN(len(vals))]))
		}
		if fd.Kind() == protoreflect.DoubleKind && g.r.IntN(2) == 0 {
			return protowire.AppendFixed64(nil, math.Float64bits(g.r.NormFloat64()*math.Pow(10, float64(g.r.IntN(60)-30))))
		}
		return protowire.AppendFixed64(nil, g.r.Uint64())
	}
}

func (g *gen) str() string {
	pool := []string{"", "x", "select * from `t`", "tab\there", "quote\"back\\", "\x00\x1f\x7f", "<>&\u2028", "é€😀",
		"\xed\xa0\x80", "\xed\xa0\xbd\xed\xb8\x80", "\xc3", "\xff\xfe", "a\x80b", "\xf8\x90\x80\x80", "\xe2\x82"}
	if g.r.IntN(4) == 0 {
		b := make([]byte, g.r.IntN(8))
		for i := range b {
			b[i] = byte(g.r.Uint32())
		}
		return string(b)
	}
	return pool[g.r.IntN(len(pool))]
}

func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.BoolKind, protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind,
		protoreflect.Uint32Kind, protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Uint64Kind:
		return protowire.VarintType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.BytesType
}

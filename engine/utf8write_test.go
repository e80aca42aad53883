package engine

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
	"github.com/dfdtools/dfd/protos/dataformpb"
)

// protobufjsFunction is the text of the function head matches in core's
// bundle, as a function expression.
func protobufjsFunction(t *testing.T, version string, head prefixedRE, fingerprint string) string {
	t.Helper()
	b, err := os.ReadFile(testenv.CoreDir(t, version) + "/bundle.js")
	if err != nil {
		t.Fatal(err)
	}
	code := string(b)
	for _, m := range head.FindAllStringIndex(code, -1) {
		end := strings.IndexByte(code[m[1]:], '}')
		if text := code[m[0] : m[1]+end+1]; end >= 0 && canonicalFingerprint(text) == fingerprint {
			return "(" + text[strings.Index(text, "function"):] + ")"
		}
	}
	t.Fatalf("core %s: no function with fingerprint %s", version, fingerprint)
	return ""
}

// Go encodes as protobufjs's own utf8.length and utf8.write do, on random
// strings of all kinds of code units (lone surrogates too), into buffers
// too short as well as long enough, at offsets.
func TestUTF8WriteMatchesProtobufjs(t *testing.T) {
	vm := goja.New()
	fn := func(src string) goja.Callable {
		v, err := vm.RunString(src)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := goja.AssertFunction(v)
		return f
	}
	jsLength := fn(protobufjsFunction(t, "3.0.62", utf8LengthRE, utf8LengthFingerprint))
	jsWrite := fn(protobufjsFunction(t, "3.0.62", utf8WriteRE, utf8WriteFingerprint))
	rng := rand.New(rand.NewPCG(3, 4))
	unit := func() uint16 {
		switch rng.IntN(6) {
		case 0:
			return uint16(rng.IntN(0x80))
		case 1:
			return uint16(0x80 + rng.IntN(0x780))
		case 2:
			return uint16(0x800 + rng.IntN(0xD000))
		case 3:
			return uint16(0xD800 + rng.IntN(0x400)) // high surrogate
		case 4:
			return uint16(0xDC00 + rng.IntN(0x400)) // low surrogate
		}
		return uint16(0xE000 + rng.IntN(0x2000))
	}
	cases := [][]uint16{nil, {}, {'p', 'l'}, {'a', 'b'}, {0xD83D, 0xDE00}, {0xD83D}, {'x', 0xDE00, 0xD83D}}
	for range 3000 {
		u := make([]uint16, rng.IntN(30))
		for i := range u {
			u[i] = unit()
		}
		cases = append(cases, u)
	}
	var strs []goja.String
	for _, u := range cases {
		strs = append(strs, goja.StringFromUTF16(u))
		if isASCIIUnits(u) {
			strs = append(strs, vm.ToValue(string(utf16ToBytes(u))).(goja.String))
		}
	}
	// Go strings with invalid UTF-8, as a project file may hold.
	for range 500 {
		b := make([]byte, rng.IntN(20))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		strs = append(strs, vm.ToValue(string(b)).(goja.String))
	}
	strs = append(strs, vm.ToValue("\x96").(goja.String), vm.ToValue("a\xff"+strings.Repeat("b", 20)).(goja.String))
	for _, s := range strs {
		u := utf16Units(s)
		wantLen, err := jsLength(nil, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := protobufUTF8Length(s); int64(got) != wantLen.ToInteger() {
			t.Fatalf("%x: length %d, protobufjs %d", u, got, wantLen.ToInteger())
		}
		n := int(wantLen.ToInteger())
		for _, shape := range [][2]int{{n, 0}, {n + 5, 3}, {max(n-2, 0), 0}, {n, 2}} {
			size, off := shape[0], shape[1]
			jsBuf := vm.NewArrayBuffer(make([]byte, size))
			arr, err := vm.New(vm.Get("Uint8Array"), vm.ToValue(jsBuf))
			if err != nil {
				t.Fatal(err)
			}
			wantN, err := jsWrite(nil, s, arr, vm.ToValue(off))
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, size)
			gotN := protobufUTF8Write(s, got, off)
			if int64(gotN) != wantN.ToInteger() || !slices.Equal(got, jsBuf.Bytes()) {
				t.Fatalf("%x into %d bytes at %d: %d % x, protobufjs %d % x", u, size, off, gotN, got, wantN.ToInteger(), jsBuf.Bytes())
			}
		}
	}
}

func isASCIIUnits(u []uint16) bool {
	for _, c := range u {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

func utf16ToBytes(u []uint16) []byte {
	b := make([]byte, len(u))
	for i, c := range u {
		b[i] = byte(c)
	}
	return b
}

func TestUTF8WritePatchApplies(t *testing.T) {
	for _, v := range sqlxCores {
		b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
		if err != nil {
			t.Fatal(err)
		}
		patched := patchUTF8Write(string(b))
		for _, want := range []string{"return __dfdUtf8Length(", "return __dfdUtf8Write("} {
			if strings.Count(patched, want) != 1 {
				t.Errorf("core %s: %q appears %d times, want 1", v, want, strings.Count(patched, want))
			}
		}
	}
}

// Through the patched bundle: the compiled graph of a project with long
// and non-ASCII strings (a lone surrogate too) is encoded to the same bytes
// as without the patches.
func TestUTF8WriteInBundle(t *testing.T) {
	code := "config { type: \"view\", description: \"é 中 😀 \\ud800\" }\nselect '" + strings.Repeat("ü😀x", 20000) + "'\n"
	root := testenv.WriteProject(t, "", map[string]string{
		"definitions/a.sqlx":     code,
		"workflow_settings.yaml": "defaultProject: p\ndefaultDataset: d\n",
	})
	req, err := proto.Marshal(&dataformpb.CoreExecutionRequest{Request: &dataformpb.CoreExecutionRequest_Compile{
		Compile: &dataformpb.CompileExecutionRequest{CompileConfig: &dataformpb.CompileConfig{
			ProjectDir: root, FilePaths: []string{"definitions/a.sqlx", "workflow_settings.yaml"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range sqlxCores {
		path := testenv.CoreDir(t, v) + "/bundle.js"
		var outs [][]byte
		for _, native := range []bool{true, false} {
			b, err := compileBundleNatives(path, v, native)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := b.NewRuntime(Options{Root: root})
			if err != nil {
				t.Fatal(err)
			}
			files, err := OpenDir(root)
			if err != nil {
				t.Fatal(err)
			}
			out, err := rt.Compile(context.Background(), files, req)
			files.Close()
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, out)
		}
		if !slices.Equal(outs[0], outs[1]) {
			t.Errorf("core %s: the encoded graphs differ (%d vs %d bytes)", v, len(outs[0]), len(outs[1]))
		}
		if len(outs[0]) < 100000 {
			t.Errorf("core %s: the graph is %d bytes, too short to hold the query", v, len(outs[0]))
		}
	}
}

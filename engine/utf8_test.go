package engine

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// jsUTF8Read is protobufjs's own decoder, as core 3.0.62 minifies it,
// returning the code units of its result (lone surrogates included).
func jsUTF8Read(t testing.TB) func(b []byte, start, end int) []uint16 {
	vm := goja.New()
	v, err := vm.RunString(`(function(bytes,t,r){var e=new Uint8Array(bytes);` +
		`var s=(function(e,t,r){if(r-t<1)return"";` + utf8ReadBody + `)(e,t,r);` +
		`var u=[];for(var k=0;k<s.length;k++)u.push(s.charCodeAt(k));return u})`)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := goja.AssertFunction(v)
	return func(b []byte, start, end int) []uint16 {
		res, err := fn(nil, vm.ToValue(vm.NewArrayBuffer(append([]byte(nil), b...))), vm.ToValue(start), vm.ToValue(end))
		if err != nil {
			t.Fatal(err)
		}
		var units []uint16
		if err := vm.ExportTo(res, &units); err != nil {
			t.Fatal(err)
		}
		return units
	}
}

func TestProtobufUTF8MatchesProtobufjs(t *testing.T) {
	js := jsUTF8Read(t)
	cases := [][]byte{
		nil, []byte("plain ascii"), []byte("é ü 中文 👍 \x00 \x7f"),
		{0xC0, 0x80}, {0xE0, 0x80, 0x80}, {0xF0, 0x80, 0x80, 0x80}, // overlong
		{0xF4, 0x90, 0x80, 0x80}, {0xF8, 0x88, 0x80, 0x80, 0x80}, // out of range
		{0x80, 0xBF, 'a'},                       // continuation bytes where a sequence should start
		{'a', 0xE2, 0x82}, {0xF0, 0x9F}, {0xC3}, // truncated at the end
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = byte(rng.IntN(128))
			} else {
				b[i] = byte(128 + rng.IntN(128))
			}
		}
		cases = append(cases, b)
	}
	for _, b := range cases {
		for _, span := range [][2]int{{0, len(b)}, {min(1, len(b)), len(b)}, {0, max(len(b)-1, 0)}} {
			want := js(b, span[0], span[1])
			got := protobufUTF8(b, span[0], span[1])
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("bytes % x [%d:%d]: Go %v, protobufjs %v", b, span[0], span[1], got, want)
			}
		}
	}
	// Surrogates encoded in three bytes come through as lone code units.
	if got := protobufUTF8([]byte{0xED, 0xA0, 0x80}, 0, 3); !slices.Equal(got, []uint16{0xD800}) {
		t.Errorf("CESU surrogate: %x", got)
	}
}

func TestUTF8ReadPatchApplies(t *testing.T) {
	for v, want := range map[string]bool{"3.0.62": true, "3.0.59": false, "3.0.52": false} {
		b, err := os.ReadFile(testenv.CoreDir(t, v) + "/bundle.js")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(patchUTF8Read(string(b)), utf8ReadCall); got != want {
			t.Errorf("core %s: patched %v, want %v (only 3.0.62 has the quadratic decoder)", v, got, want)
		}
	}
}

// BenchmarkUTF8Read decodes a long string with core's protobufjs in a
// runtime (a JiT request whose jitCode is that long): linear with the
// patch — it was quadratic, 17 s for 200 KB.
func BenchmarkUTF8Read(b *testing.B) {
	bundle, err := LoadBundle(testenv.CoreDir(b, "3.0.62")+"/bundle.js", "3.0.62")
	if err != nil {
		b.Fatal(err)
	}
	rt, err := bundle.NewRuntime(Options{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	vm := rt.vm
	decode, err := vm.RunString(`(function(bytes){ return __dfdUtf8Read(new Uint8Array(bytes), 0, bytes.byteLength).length })`)
	if err != nil {
		b.Fatal(err)
	}
	fn, _ := goja.AssertFunction(decode)
	for _, n := range []int{10 << 10, 100 << 10, 1 << 20} {
		payload := append([]byte("é"), strings.Repeat("x", n)...)
		buf := vm.ToValue(vm.NewArrayBuffer(payload))
		b.Run(fmt.Sprintf("%dKiB", n>>10), func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				if _, err := fn(nil, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package wire_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	"github.com/dfdtools/dfd/jit/wire"
	"github.com/dfdtools/dfd/jit/wirepb"
)

func request(id uint64, payload []byte) *wirepb.Frame {
	return &wirepb.Frame{Kind: &wirepb.Frame_Request{Request: &wirepb.Request{Id: id, Kind: &wirepb.Request_Jit{Jit: &wirepb.Jit{Request: payload}}}}}
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := wire.NewWriter(&buf)
	frames := []*wirepb.Frame{
		request(1, []byte("first")),
		{Kind: &wirepb.Frame_AdapterResult{AdapterResult: &wirepb.AdapterResult{CallId: 7, Outcome: &wirepb.AdapterResult_Response{Response: []byte{}}}}},
		request(2, bytes.Repeat([]byte("x"), 3<<20)), // larger than the reader's buffers
		request(3, []byte("second")),
	}
	for _, f := range frames {
		if err := w.Write(f); err != nil {
			t.Fatal(err)
		}
	}
	// The framing is protodelim's: a standard reader reads it too.
	var check wirepb.Frame
	if err := protodelim.UnmarshalFrom(bytes.NewReader(buf.Bytes()), &check); err != nil || check.GetRequest().GetId() != 1 {
		t.Fatalf("protodelim reads %v, %v", &check, err)
	}
	r := wire.NewReader(&buf, 0)
	var got []*wirepb.Frame
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f)
	}
	if len(got) != len(frames) {
		t.Fatalf("read %d frames, want %d", len(got), len(frames))
	}
	for i := range frames {
		if !proto.Equal(got[i], frames[i]) {
			t.Errorf("frame %d differs", i)
		}
	}
	// An empty response is present, not absent: protobufjs needs bytes.
	if _, ok := got[1].GetAdapterResult().GetOutcome().(*wirepb.AdapterResult_Response); !ok {
		t.Error("empty adapter response read back as absent")
	}
}

func TestBadStreams(t *testing.T) {
	valid, _ := proto.Marshal(request(1, []byte("x")))
	cases := []struct {
		name   string
		stream []byte
		max    int
		want   string
	}{
		{"oversized", []byte{0x80, 0x80, 0x80, 0x80, 0x10}, 0, "exceeds the 67108864-byte limit"},
		{"configured limit", append([]byte{byte(len(valid))}, valid...), 4, "exceeds the 4-byte limit"},
		{"not protobuf", []byte{3, 0xff, 0xff, 0xff}, 0, "malformed frame"},
		{"empty frame", []byte{0}, 0, "no content"},
		{"truncated body", []byte{10, 1, 2}, 0, "stream ended inside a frame (2 of 10 bytes)"},
		{"truncated prefix", []byte{0x80}, 0, "inside a length prefix"},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 11), 0, "malformed length prefix"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := wire.NewReader(bytes.NewReader(c.stream), c.max).Read()
			if !errors.Is(err, wire.ErrProtocol) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want a protocol error mentioning %q", err, c.want)
			}
		})
	}
}

func TestStalledFrame(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	// A stray line of text: 'h' (104) reads as the length of a frame.
	pw.Write([]byte("hello from a stray print\n"))
	r := wire.NewReader(pr, 0)
	wire.SetStallTimeout(r, 200*time.Millisecond)
	start := time.Now()
	_, err = r.Read()
	if !errors.Is(err, wire.ErrProtocol) || !strings.Contains(err.Error(), "stalled inside a frame (24 of 104 bytes") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestConcurrentWrites(t *testing.T) {
	pr, pw := io.Pipe()
	w := wire.NewWriter(pw)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				_ = w.Write(request(uint64(j), bytes.Repeat([]byte{byte(j)}, 10000)))
			}
		}()
	}
	go func() {
		wg.Wait()
		pw.Close()
	}()
	r := wire.NewReader(pr, 0)
	n := 0
	for {
		f, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := f.GetRequest().GetJit().GetRequest()
		if len(p) != 10000 || p[0] != byte(f.GetRequest().GetId()) || p[9999] != p[0] {
			t.Fatal("interleaved frames")
		}
		n++
	}
	if n != 400 {
		t.Errorf("read %d frames, want 400", n)
	}
}

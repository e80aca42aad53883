package daemon

import (
	"context"
	"testing"
	"time"

	"github.com/dfdtools/dfd/adapters"
	"github.com/dfdtools/dfd/protos/dataformpb"
	"github.com/dfdtools/dfd/settings"
)

// byteLimits records the byte_limit of every Execute.
type byteLimits struct {
	adapters.UnimplementedAdapter
	got []int64
}

func (b *byteLimits) Execute(_ context.Context, req *dataformpb.ExecuteRequest) (*dataformpb.ExecuteResponse, error) {
	b.got = append(b.got, req.GetByteLimit())
	return &dataformpb.ExecuteResponse{}, nil
}

// dfd.preview.maxBytesBilled reaches the adapter as every preview and
// check query's byte limit (a lower limit asked by the JiT code stays);
// without it the default cap applies (10 GiB), and only the loud
// dfd.preview.unlimitedBytesBilled lifts it.
func TestPreviewPolicyMaxBytesBilled(t *testing.T) {
	b := NewBackend(BackendOptions{})
	defer b.Close()
	for _, c := range []struct {
		setting     int64
		unlimited   bool
		asked, want int64
		warned      bool // Configure says uncappedWarning (when the cap is turned off)
	}{
		{0, false, 0, 10 << 30, false},
		{0, false, 500, 500, false},
		{0, false, 1 << 40, 10 << 30, false},
		{1 << 30, false, 0, 1 << 30, false},
		{1 << 30, false, 1 << 40, 1 << 30, false},
		{1 << 30, false, 500, 500, false},
		{0, true, 0, 0, true},
		{1 << 30, true, 1 << 40, 1 << 40, false}, // still off: said once
	} {
		err := b.Configure(settings.Settings{PreviewMaxBytesBilled: c.setting, PreviewUnlimitedBytesBilled: c.unlimited})
		if warned := err != nil && err.Error() == uncappedWarning; warned != c.warned || (err != nil && !warned) {
			t.Errorf("setting %d, unlimited %v: Configure said %v", c.setting, c.unlimited, err)
		}
		inner := &byteLimits{}
		a := previewPolicy(b.currentSettings()).Wrap(inner)
		// A DML statement (a dry run in preview) and a query.
		for _, stmt := range []string{"SELECT 1", "DELETE FROM t WHERE TRUE"} {
			if _, err := a.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: stmt, ByteLimit: c.asked}); err != nil {
				t.Fatal(err)
			}
		}
		check := checkPolicy(b.currentSettings()).Wrap(inner)
		if _, err := check.Execute(context.Background(), &dataformpb.ExecuteRequest{Statement: "SELECT 1", ByteLimit: c.asked}); err != nil {
			t.Fatal(err)
		}
		if len(inner.got) != 3 {
			t.Fatalf("%d executions", len(inner.got))
		}
		for _, got := range inner.got {
			if got != c.want {
				t.Errorf("setting %d, unlimited %v, asked %d: byte limit %d, want %d", c.setting, c.unlimited, c.asked, got, c.want)
			}
		}
	}
}

func TestJitTimeouts(t *testing.T) {
	b := NewBackend(BackendOptions{JitTimeout: 7 * time.Second})
	defer b.Close()
	if got := b.jitTimeout(settings.Settings{}); got != 7*time.Second {
		t.Errorf("default preview timeout %s", got)
	}
	if got := b.jitTimeout(settings.Settings{JitTimeout: 300 * time.Millisecond}); got != 300*time.Millisecond {
		t.Errorf("preview timeout %s", got)
	}
	if got := jitCheckTimeoutFor(settings.Settings{}); got != jitCheckTimeout {
		t.Errorf("default check timeout %s", got)
	}
	if got := jitCheckTimeoutFor(settings.Settings{JitTimeout: time.Second}); got != time.Second {
		t.Errorf("check timeout %s", got)
	}
}

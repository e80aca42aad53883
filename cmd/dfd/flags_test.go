package main

import "testing"

func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824", 1 << 30, true},
		{"0", 0, true},
		{"512MiB", 512 << 20, true},
		{"512mib", 512 << 20, true},
		{"512M", 512 << 20, true},
		{"512MB", 512 << 20, true},
		{"2GiB", 2 << 30, true},
		{"64KiB", 64 << 10, true},
		{"100B", 100, true},
		{"", 0, false},
		{"lots", 0, false},
		{"-1", 0, false},
		{"1.5GiB", 0, false},
		{"1TiB", 0, false},
		{"99999999999GiB", 0, false},
	} {
		var b byteSize
		err := b.Set(tc.in)
		if (err == nil) != tc.ok || (tc.ok && int64(b) != tc.want) {
			t.Errorf("Set(%q) = %d, %v; want %d, ok %v", tc.in, int64(b), err, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   byteSize
		want string
	}{{1 << 30, "1GiB"}, {1536 << 20, "1536MiB"}, {100, "100"}, {0, "0"}} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("%d prints as %q, want %q", int64(tc.in), got, tc.want)
		}
	}
}

package nodeworker_test

import (
	"testing"

	"github.com/dfdtools/dfd/jit/nodeworker"
)

func TestOutOfMemory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stderr []string
		want   bool
	}{
		{"reached heap limit", []string{"", "<--- JS stacktrace --->", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", " 1: 0xb78db3 node::OOMErrorHandler"}, true},
		{"ineffective mark-compacts", []string{"FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory"}, true},
		{"another crash", []string{"Segmentation fault"}, false},
		{"a script's RangeError", []string{"level=ERROR msg=\"RangeError: Invalid array length\""}, false},
		{"nothing", nil, false},
	} {
		if got := nodeworker.OutOfMemory(tc.stderr); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

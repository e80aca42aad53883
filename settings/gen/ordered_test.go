package main

import (
	"bytes"
	"os"
	"testing"
)

// The extension's package.json round-trips byte for byte, so that only the
// settings part changes when gen rewrites it.
func TestOrderedRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../vscode-extension/package.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := parseOrdered(data)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	writeOrdered(&b, v, "")
	b.WriteByte('\n')
	if !bytes.Equal(b.Bytes(), data) {
		t.Errorf("package.json does not round-trip")
	}
}

package main

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for dfd where dfd starts itself:
// the worker pool runs `<this executable> worker …`, so when the first
// argument is "worker" the binary serves as a worker instead of running tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
		os.Exit(run(context.Background(), env, os.Args[1:]))
	}
	os.Exit(m.Run())
}

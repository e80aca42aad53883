package main

import (
	"context"
	"os"
	"testing"
)

// TestMain lets the test binary stand in for dfd where dfd starts itself:
// the worker pool runs `<this executable> worker …`, so when the first
// argument is "worker" the binary serves as a worker instead of running tests.
// With DFD_TEST_AS_DFD=1 it is dfd, for tests that need dfd as a process of
// its own (runDFDProcess).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "worker" || os.Getenv(asDFDEnv) == "1") {
		env := &cmdEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
		os.Exit(run(context.Background(), env, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// asDFDEnv makes the test binary run as dfd (see TestMain).
const asDFDEnv = "DFD_TEST_AS_DFD"

package nodeworker_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/workertest"
	"github.com/dfdtools/dfd/jit/nodeworker"
)

func TestMain(m *testing.M) {
	code := m.Run()
	os.RemoveAll(scriptDir)
	if code == 0 {
		if kids := workertest.Children(); len(kids) > 0 {
			fmt.Fprintf(os.Stderr, "leaked child processes after all tests: %v\n", kids)
			code = 1
		}
	}
	os.Exit(code)
}

// needNode is the node the workers run on. Without a Node.js ≥ 20 the
// test fails rather than skips: CI must test the node engine.
func needNode(t testing.TB) string {
	t.Helper()
	node, _, err := nodeworker.FindNode()
	if err != nil {
		t.Fatalf("the node engine needs Node.js %d or newer: %v", nodeworker.MinNodeMajor, err)
	}
	return node
}

var scriptDir = func() string {
	d, err := os.MkdirTemp("", "dfd-nodeworker-test")
	if err != nil {
		panic(err)
	}
	return d
}()

// command is the node worker's command for root.
func command(t testing.TB, root, bundle string) []string {
	t.Helper()
	node := needNode(t)
	s, err := nodeworker.WriteScript(scriptDir)
	if err != nil {
		t.Fatal(err)
	}
	return nodeworker.CommandFor(node, s, root, bundle)
}

// nodeWorkers are workers of the node engine.
var nodeWorkers = workertest.Engine{Command: command}

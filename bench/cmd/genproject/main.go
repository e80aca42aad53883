// Command genproject writes a synthetic Dataform project of a given number
// of actions (see package projectgen), for benchmarks.
//
//	genproject -n 1000 -o /tmp/p1000 [-jit] [-seed 1] [-core 3.0.62] [-big-sqlx BYTES]
//
// It prints the counts of what it wrote. Install a core into the project
// (npm install, or copy one into node_modules/@dataform/core) to compile it.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/dfdtools/dfd/bench/projectgen"
)

func main() {
	n := flag.Int("n", 100, "number of actions in the compiled graph")
	out := flag.String("o", "", "output directory (must not exist or be empty)")
	jit := flag.Bool("jit", false, "include JiT actions (publish(...).jitCode(...))")
	seed := flag.Int64("seed", 1, "random seed; the same seed gives the same project")
	core := flag.String("core", projectgen.DefaultCoreVersion, "@dataform/core version written to package.json")
	bigSQLX := flag.Int("big-sqlx", 0, "add one table in a .sqlx file of about this many bytes ("+projectgen.BigSQLXPath+")")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: genproject -n ACTIONS -o DIR [-jit] [-seed N] [-core VERSION] [-big-sqlx BYTES]")
		os.Exit(2)
	}
	c, err := projectgen.GenerateCounts(*out, projectgen.Options{Actions: *n, CoreVersion: *core, JiT: *jit, Seed: *seed, BigSQLXBytes: *bigSQLX})
	if err != nil {
		fmt.Fprintln(os.Stderr, "genproject:", err)
		os.Exit(1)
	}
	fmt.Printf("%s: %d actions in %d files (declarations %d, tables %d, views %d, incremental %d, "+
		"operations %d, assertions %d + %d built-in; %d JiT)\n",
		*out, c.Total(), c.Files, c.Declarations, c.Tables, c.Views, c.Incrementals,
		c.Operations, c.Assertions, c.BuiltinAssertions, c.JiT)
}

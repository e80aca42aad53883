package source_test

import (
	"fmt"
	"testing"

	"github.com/dfdtools/dfd/source"
)

func TestFindDependencies(t *testing.T) {
	cases := []struct{ text, want string }{
		{`config { type: "view", dependencies: ["a", 'b', {name: "c", schema: "s"}] }`, `[a b s.c]`},
		{`config { dependencies: "one" }`, `[one]`},
		{`publish("y").dependencies(["x", other]).dependencies("z")`, `[x z]`},
		{`assert("q", { dependencyTargets: [{ name: "daily", dataset: "d", project: "p" }] })`, `[p.d.daily]`},
		{`const dependencies = ["not", "a", "list"]; f(dependencies)`, `[]`},
		{`{"dependencies": ["quoted"]}`, `[quoted]`},
	}
	for _, c := range cases {
		var got []string
		for _, e := range source.FindDependencies([]byte(c.text)) {
			n := e.Name.Value
			if c.text[e.Name.Span.Start:e.Name.Span.End] != n {
				t.Errorf("%s: span of %q covers %q", c.text, n, c.text[e.Name.Span.Start:e.Name.Span.End])
			}
			if e.Schema.Value != "" {
				n = e.Schema.Value + "." + n
			}
			if e.Database.Value != "" {
				n = e.Database.Value + "." + n
			}
			got = append(got, n)
		}
		if fmt.Sprint(got) != c.want && !(got == nil && c.want == "[]") {
			t.Errorf("%s: %v, want %s", c.text, got, c.want)
		}
	}
}

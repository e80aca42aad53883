package incrtest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/dfdtools/dfd/internal/testkit/testenv"
)

// Scenario is a scripted sequence of edits for the cases random edits
// rarely reach: after the first compile and after each step (files
// written, "" deletes one), the incremental result must equal the full
// compile's.
type Scenario struct {
	Name  string
	Files map[string]string
	Steps []map[string]string
}

const settings = "defaultProject: proj\ndefaultDataset: ds\ndefaultLocation: US\ndefaultAssertionDataset: checks\n"

// Scenarios are the scripted cases both engines' tests run.
func Scenarios() []Scenario {
	table := func(sql string) string { return "config { type: \"table\", name: \"x\" }\n" + sql + "\n" }
	return []Scenario{{
		// Two files define the same target (core reports the duplicate);
		// one's compile() then throws, leaving the other alone; fixing it
		// must bring the duplicate error back.
		Name: "duplicate target hidden by a throwing compile",
		Files: map[string]string{
			"workflow_settings.yaml": settings,
			"definitions/a.sqlx":     table("select 1 as v"),
			"definitions/b.sqlx":     table("select 2 as v"),
			"definitions/c.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"x\")}\n",
		},
		Steps: []map[string]string{
			{"definitions/b.sqlx": table("select ${foo} as v")},
			{"definitions/b.sqlx": table("select 3 as v")},
			{"definitions/b.sqlx": "config { type: \"table\", name: \"y\" }\nselect 3 as v\n"},
			{"definitions/b.sqlx": table("select 4 as v")},
		},
	}, {
		// A dependency cycle made and broken by one file.
		Name: "dependency cycle",
		Files: map[string]string{
			"workflow_settings.yaml": settings,
			"definitions/a.sqlx":     "config { type: \"view\" }\nselect 1 as v\n",
			"definitions/b.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"a\")}\n",
		},
		Steps: []map[string]string{
			{"definitions/a.sqlx": "config { type: \"view\" }\nselect * from ${ref(\"b\")}\n"},
			{"definitions/a.sqlx": "config { type: \"view\" }\nselect 2 as v\n"},
			{"definitions/a.sqlx": "config { type: \"view\", dependencies: [\"b\"] }\nselect 3 as v\n"},
			{"definitions/a.sqlx": "config { type: \"view\" }\nselect 4 as v\n"},
		},
	}, {
		// With includeTestsInCompiledGraph core adds each test to the
		// dependencies of the table it tests, after compile().
		Name: "tests in the compiled graph",
		Files: map[string]string{
			"workflow_settings.yaml": settings + "includeTestsInCompiledGraph: true\n",
			"definitions/t.sqlx":     "config { type: \"table\" }\nselect 1 as v\n",
			"definitions/u.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"t\")}\n",
			"definitions/t_test.sqlx": "config { type: \"test\", dataset: \"t\" }\n" +
				"input \"u\" { select 1 as v }\nselect 1 as v\n",
		},
		Steps: []map[string]string{
			{"definitions/u.sqlx": "config { type: \"view\" }\nselect v + 1 as w from ${ref(\"t\")}\n"},
			{"definitions/u.sqlx": "config { type: \"view\" }\nselect v + 2 as w from ${ref(\"t\")}\n"},
			{"definitions/t.sqlx": "config { type: \"table\" }\nselect 2 as v\n"},
			{"definitions/u.sqlx": "config { type: \"view\" }\nselect v + 3 as w from ${ref(\"t\")}\n"},
		},
	}, {
		// A dependency with includeDependentAssertions is qualified after
		// compile() from the assertions other files declare: editing an
		// assertion changes the dependencies of an action whose compile()
		// result is reused (and so its encoding), with no target changed.
		// The name prefix and dataset suffix rename every target after
		// compile() too.
		Name: "dependent assertions and a name prefix",
		Files: map[string]string{
			"workflow_settings.yaml": settings + "namePrefix: dev\ndatasetSuffix: s\n",
			"definitions/x.sqlx":     "config { type: \"table\" }\nselect 1 as v\n",
			"definitions/y.sqlx":     "config { type: \"table\" }\nselect 2 as v\n",
			"definitions/chk.sqlx":   assertion("x"),
			"definitions/c.sqlx": "config { type: \"view\", dependencies: [{ name: \"x\", includeDependentAssertions: true }] }\n" +
				"select * from ${ref(\"y\")}\n",
			// chk's query refs y, which core's compile() of chk adds to
			// the action-assertion map: d gets chk through it.
			"definitions/d.sqlx": "config { type: \"view\", dependencies: [{ name: \"y\", includeDependentAssertions: true }] }\n" +
				"select 1 as v\n",
		},
		Steps: []map[string]string{
			{"definitions/chk.sqlx": assertion("y")},
			{"definitions/y.sqlx": "config { type: \"table\" }\nselect 3 as v\n"},
			{"definitions/chk.sqlx": assertion("x")},
			{"definitions/y.sqlx": "config { type: \"table\" }\nselect 4 as v\n"},
		},
	}, {
		// A file's config breaks, so its actions leave the graph, and is
		// fixed: the targets change, and only the actions whose lookups
		// find something else may compile again (b's ref of x), the
		// others' results are reused (c's ref of y).
		Name: "an action leaves the graph and comes back",
		Files: map[string]string{
			"workflow_settings.yaml": settings,
			"definitions/x.sqlx":     "config { type: \"table\" }\nselect 1 as v\n",
			"definitions/y.sqlx":     "config { type: \"table\" }\nselect 2 as v\n",
			"definitions/b.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"x\")}\n",
			"definitions/c.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"y\")} join ${self()} using (v)\n",
			"definitions/o.sqlx":     "config { type: \"operations\", hasOutput: true }\ncreate table ${self()} as select 1 as v\n",
			"definitions/p.sqlx":     "config { type: \"view\" }\nselect * from ${ref(\"o\")}\n",
		},
		Steps: []map[string]string{
			{"definitions/x.sqlx": "config { type: \"table\", bogus: 1 }\nselect 1 as v\n"},
			{"definitions/x.sqlx": "config { type: \"table\" }\nselect 3 as v\n"},
			{"definitions/o.sqlx": "config { type: \"operations\" }\ncreate table ${self()} as select 1 as v\n"},
			{"definitions/o.sqlx": "config { type: \"operations\", hasOutput: true }\ncreate table ${self()} as select 2 as v\n"},
			// Another kind with the same target: core's classes are
			// minified, so kinds are told apart by class, not by name.
			{"definitions/o.sqlx": "config { type: \"table\" }\nselect 3 as v\n"},
			{"definitions/o.sqlx": "config { type: \"operations\" }\ncreate table ${self()} as select 4 as v\n"},
			{"definitions/o.sqlx": "config { type: \"view\" }\nselect 5 as v\n"},
			{"definitions/y.sqlx": "config { type: \"table\", name: \"x\" }\nselect 2 as v\n"},
			{"definitions/y.sqlx": "config { type: \"table\" }\nselect 4 as v\n"},
		},
	}, {
		// A query that reads the session's list of actions at compile
		// time depends on every file: it is compiled again every time,
		// here after an edit of another file's tags, which changes no
		// target.
		Name: "a query that reads the whole graph",
		Files: map[string]string{
			"workflow_settings.yaml": settings,
			"definitions/t.sqlx":     "config { type: \"table\" }\nselect 1 as v\n",
			"definitions/u.sqlx": "config { type: \"view\" }\n" +
				"select ${dataform.actions.filter(a => (a.proto.tags || []).indexOf(\"x\") >= 0).length} as tagged\n",
		},
		Steps: []map[string]string{
			{"definitions/t.sqlx": "config { type: \"table\", tags: [\"x\"] }\nselect 1 as v\n"},
			{"definitions/t.sqlx": "config { type: \"table\" }\nselect 1 as v\n"},
			{"definitions/t.sqlx": "config { type: \"table\", tags: [\"x\"] }\nselect 2 as v\n"},
		},
	}}
}

// assertion is an assertion named chk that depends on target.
func assertion(target string) string {
	return fmt.Sprintf("config { type: \"assertion\", name: \"chk\", dependencies: [%q] }\nselect 1 as v from ${ref(\"y\")} where false\n", target)
}

// RunScenario writes s into a project with core testenv.CoreVersion and
// checks c after the first compile and after each step. c is made for the
// project's root.
func RunScenario(t *testing.T, s Scenario, compiler func(root string) Compiler) {
	t.Helper()
	root := testenv.WriteProject(t, testenv.CoreVersion, s.Files)
	c := compiler(root)
	files := map[string]bool{}
	for name := range s.Files {
		files[name] = true
	}
	paths := func() []string {
		var out []string
		for name := range files {
			out = append(out, name)
		}
		sort.Strings(out)
		return out
	}
	check := func(what string) {
		t.Helper()
		if full := Check(t, c, paths(), what); len(full) == 0 {
			t.Fatalf("%s: no full compile", what)
		}
	}
	check("first compile")
	for i, step := range s.Steps {
		for name, text := range step {
			p := filepath.Join(root, filepath.FromSlash(name))
			if text == "" {
				delete(files, name)
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			files[name] = true
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		check(fmt.Sprintf("step %d", i+1))
	}
	if n, _ := c.Counts(); n == 0 {
		t.Errorf("no step compiled incrementally: the scenario compares nothing")
	}
}

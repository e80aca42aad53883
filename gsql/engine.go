package gsql

import (
	"fmt"
	"sync"

	googlesql "github.com/goccy/go-googlesql"
)

// engine holds what every parse needs, made once per process.
type engine struct {
	parser *googlesql.ParserOptions
	errs   *googlesql.ErrorMessageOptions
	// kindShift is what to add to an ASTNodeKind before asking
	// GetDescendantsWithKinds for it: go-googlesql v0.3.0 reports node
	// kinds one above the numbers that call takes (measured, not
	// documented), so it is calibrated at start rather than assumed.
	kindShift int32
}

// parse parses sql as a script with dfd's options: every parse of a
// statement goes through here, so that its garbage is accounted for
// (wasmGarbage).
func (e *engine) parse(sql string) (*googlesql.ParserOutput, error) {
	wasmGarbage(sql)
	return googlesql.ParseScript(sql, e.parser, e.errs)
}

var (
	engineOnce sync.Once
	engineVal  *engine
	engineErr  error
)

// Init starts the GoogleSQL engine if it is not running yet. Calling it is
// optional (every entry point starts the engine on first use); a daemon
// calls it in the background so the first preview does not pay for it.
func Init() error {
	_, err := theEngine()
	return err
}

func theEngine() (*engine, error) {
	engineOnce.Do(func() {
		engineVal, engineErr = newEngine()
		if engineErr != nil {
			engineErr = fmt.Errorf("starting GoogleSQL: %w", engineErr)
		}
	})
	return engineVal, engineErr
}

func newEngine() (*engine, error) {
	if err := googlesql.Init(); err != nil {
		return nil, err
	}
	lang, err := languageOptions()
	if err != nil {
		return nil, err
	}
	popts, err := googlesql.NewParserOptions2(nil, nil, lang)
	if err != nil {
		return nil, fmt.Errorf("parser options: %w", err)
	}
	e := &engine{
		parser: popts,
		errs: &googlesql.ErrorMessageOptions{
			Mode:      googlesql.ErrorMessageModeErrorMessageOneLine,
			Stability: googlesql.ErrorMessageStabilityProduction,
		},
	}
	if e.kindShift, err = calibrateKinds(popts); err != nil {
		return nil, err
	}
	return e, nil
}

// calibrateKinds finds the shift between the node kinds the parser reports
// and the kinds GetDescendantsWithKinds takes, on statements whose nodes
// are known, and fails when no small shift finds exactly those nodes:
// classification must never run with a search that finds nothing.
func calibrateKinds(popts *googlesql.ParserOptions) (int32, error) {
	probes := []struct {
		sql  string
		kind googlesql.ASTNodeKind
	}{
		{"SELECT f(1), g(2)", googlesql.ASTNodeKindAstFunctionCall},
		{"SELECT * FROM t1, tvf(1), tvf(2)", googlesql.ASTNodeKindAstTvf},
		{"FROM t |> INSERT INTO u", googlesql.ASTNodeKindAstPipeInsert},
	}
	for _, shift := range []int32{0, -1, 1} {
		ok := true
		for _, p := range probes {
			out, err := googlesql.ParseScript(p.sql, popts, nil)
			if err != nil || out == nil {
				return 0, fmt.Errorf("calibration statement %q: %v", p.sql, err)
			}
			script, err := out.Script()
			if err != nil || script == nil {
				return 0, fmt.Errorf("calibration statement %q: %v", p.sql, err)
			}
			nodes, err := script.GetDescendantsWithKinds([]int32{int32(p.kind) + shift})
			if err != nil {
				return 0, fmt.Errorf("calibration statement %q: %w", p.sql, err)
			}
			want := 2
			if p.kind == googlesql.ASTNodeKindAstPipeInsert {
				want = 1
			}
			if len(nodes) != want {
				ok = false
				break
			}
			for _, n := range nodes {
				if k, err := n.NodeKind(); err != nil || k != p.kind {
					ok = false
				}
			}
		}
		if ok {
			return shift, nil
		}
	}
	return 0, fmt.Errorf("GetDescendantsWithKinds does not find known nodes; this version of go-googlesql cannot be used to classify statements")
}

// languageOptions are GoogleSQL's features as BigQuery offers them. The
// parser accepts GoogleSQL's maximum released feature set (pipe syntax,
// QUALIFY, GROUP BY ALL, …): accepting a little more than BigQuery does is
// harmless for classification (BigQuery still rejects what it does not
// support), while rejecting BigQuery syntax would turn harmless queries
// into dry runs.
func languageOptions() (*googlesql.LanguageOptions, error) {
	lang, err := googlesql.NewLanguageOptions()
	if err != nil {
		return nil, fmt.Errorf("language options: %w", err)
	}
	if err := lang.EnableMaximumLanguageFeatures(); err != nil {
		return nil, fmt.Errorf("language features: %w", err)
	}
	if err := lang.SetSupportsAllStatementKinds(); err != nil {
		return nil, fmt.Errorf("statement kinds: %w", err)
	}
	if err := lang.SetProductMode(googlesql.ProductModeProductExternal); err != nil {
		return nil, fmt.Errorf("product mode: %w", err)
	}
	return lang, nil
}

package sqlcheck

import (
	"fmt"
	"strings"
)

// WhyNotAnalysed is the finding that says why the action named target
// (database.schema.name, any case) has no analysis — its error, or the
// note that it was skipped — as "file:line:col: message" (1-based); ok is
// false when the check has no such finding, and the caller says what it
// knows (a JiT action, an operation).
func (r *Result) WhyNotAnalysed(target string) (why string, ok bool) {
	for _, f := range r.Findings {
		if strings.EqualFold(f.Action, target) && (f.Severity == Error || f.Code == CodeSkipped) {
			return fmt.Sprintf("%s:%d:%d: %s", f.File, f.Line+1, f.Col+1, f.Message), true
		}
	}
	return "", false
}

package project

import "testing"

// The key core names is placed only when no other key of that name, at
// any depth, could be the one it means, and only where the key is
// written as it reads.
func TestTopLevelKey(t *testing.T) {
	for _, tt := range []struct {
		name, text, key string
		line, col, end  int
	}{
		{"block", "a: 1\nkeyy: x\n", "keyy", 2, 1, 5},
		{"double-quoted", "a: 1\n\"keyy\": x\n", "keyy", 2, 1, 7},
		{"single-quoted", "a: 1\n'keyy': x\n", "keyy", 2, 1, 7},
		{"flow after a wide character", "{é😀: \"1\", keyy: x}\n", "keyy", 1, 15, 19},
		{"indented top level", "  a: 1\n  keyy: x\n", "keyy", 2, 3, 7},
		{"also nested", "keyy: x\nvars:\n  keyy: y\n", "keyy", 0, 0, 0},
		{"nested only", "vars:\n  keyy: y\n", "keyy", 0, 0, 0},
		{"in a list", "keyy: x\nl:\n  - keyy: y\n", "keyy", 0, 0, 0},
		{"twice", "keyy: x\nkeyy: y\n", "keyy", 0, 0, 0},
		{"merged from an anchor", "base: &b\n  keyy: y\n<<: *b\n", "keyy", 0, 0, 0},
		{"escaped", "\"k\\x65yy\": x\n", "keyy", 0, 0, 0},
		{"tagged", "!!str keyy: x\n", "keyy", 0, 0, 0},
		{"absent", "a: 1\n", "keyy", 0, 0, 0},
		{"not a mapping", "- keyy\n", "keyy", 0, 0, 0},
		{"not YAML", "a: [\n", "a", 0, 0, 0},
	} {
		line, col, end := topLevelKey([]byte(tt.text), tt.key)
		if line != tt.line || col != tt.col || end != tt.end {
			t.Errorf("%s: %d:%d-%d, want %d:%d-%d", tt.name, line, col, end, tt.line, tt.col, tt.end)
		}
	}
}

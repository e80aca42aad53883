package gsql

import "testing"

// TestForgetKeepAlive: forgetKeepAlive reaches go-googlesql's keep-alive
// list of a catalog (an unexported field: a new go-googlesql that moves it
// fails here, before catalogs of temporary functions leak again), takes
// out what was just added, and nothing else.
func TestForgetKeepAlive(t *testing.T) {
	c, err := NewCatalog("p")
	if err != nil {
		t.Fatal(err)
	}
	typ, err := c.gsqlType(Type{Kind: "STRING"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := c.gsqlType(Type{Kind: "INT64"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cat.AddType("dfd_test_alias", typ); err != nil {
		t.Fatal(err)
	}
	if forgetKeepAlive(c.cat, other) {
		t.Fatal("forgetKeepAlive took out a value that was not the last one added")
	}
	if !forgetKeepAlive(c.cat, typ) {
		t.Fatal("forgetKeepAlive did not find the value AddType just kept alive: has go-googlesql's SimpleCatalog changed?")
	}
	if forgetKeepAlive(c.cat, typ) {
		t.Fatal("forgetKeepAlive took the same value out twice")
	}
	if forgetKeepAlive(nil, typ) {
		t.Fatal("forgetKeepAlive of a nil catalog")
	}
}

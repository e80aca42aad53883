package gsql

import (
	"reflect"
	"unsafe"

	googlesql "github.com/goccy/go-googlesql"
)

// A temporary function's catalog could never be freed. go-googlesql keeps
// Go wrappers alive through lists of references (keepAlive) and frees the
// WebAssembly objects behind them from finalizers. Registering a temporary
// function closes a loop of such references: the catalog keeps the Function
// it now owns, the Function its signature, the signature the resolved CREATE
// TEMP FUNCTION it came from, that node its AnalyzerOutput — and the output
// keeps the catalog it was analysed against. Go never runs the finalizers of
// objects in a cycle, so every catalog that declared a temporary function
// stayed in GoogleSQL's memory for good (built-in functions, tables and all:
// ≈1.5 MiB per check of the 30-action bench project, with a new Checker
// each time, see TestColdChecksLeaveNothing).
//
// The catalog's reference to the Function is the one that does nothing:
// AddOwnedFunction hands the function's ownership to the C++ catalog and
// clears the wrapper's pointer, so the wrapper frees nothing and is never
// used again. forgetKeepAlive drops it, which opens the loop. What the
// function's signature needs stays alive as before, through Catalog.keep
// (the AnalyzerOutput, and through it the catalog and type factory it was
// analysed with) for as long as any catalog that registered it is in use.
// Once unused, the output is finalized before the catalog it points to, the
// order every analysis output already has.
//
// go-googlesql exports no way to do this, so it is done on its unexported
// field; TestForgetKeepAlive fails if a new version of go-googlesql moves it.

// forgetKeepAlive removes v from the end of cat's keep-alive list, where
// the Add method just called put it, and reports whether it was there.
func forgetKeepAlive(cat *googlesql.SimpleCatalog, v any) bool {
	if cat == nil || cat.EnumerableCatalog == nil || cat.EnumerableCatalog.Catalog == nil {
		return false
	}
	field := reflect.ValueOf(cat.EnumerableCatalog.Catalog).Elem().FieldByName("keepAlive")
	if !field.IsValid() || field.Kind() != reflect.Slice || field.Type().Elem().Kind() != reflect.Interface {
		return false
	}
	list := reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem()
	n := list.Len()
	if n == 0 || list.Index(n-1).Interface() != v {
		return false
	}
	list.Index(n - 1).Set(reflect.Zero(field.Type().Elem())) // the backing array must not hold it either
	list.SetLen(n - 1)
	return true
}

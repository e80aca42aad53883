package lsp_test

import "github.com/dfdtools/dfd/lsp"

func lspOptions() lsp.Options { return lsp.Options{Name: "dfd-test", Version: "test"} }

package jit

import "strings"

// workerEnvNames are the only variables of the daemon's environment a
// worker inherits. A worker needs no credentials and no network: it must
// never see GOOGLE_APPLICATION_CREDENTIALS, CLOUDSDK_*, tokens or proxies.
// An allow-list, not a deny-list, so that a new secret cannot slip through.
var workerEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "TMPDIR": true, "USER": true,
	"LANG": true, "LC_ALL": true, "LC_CTYPE": true, "TZ": true,
}

// workerEnv filters environ down to workerEnvNames and appends extra.
func workerEnv(environ, extra []string) []string {
	var env []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if workerEnvNames[name] {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

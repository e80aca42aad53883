package credentials

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// serviceAccountKey is a syntactically valid service-account key file (a
// fresh RSA key; it grants nothing anywhere).
func serviceAccountKey(t *testing.T, project string) []byte {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	b, _ := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     project,
		"private_key_id": "abc",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   "dfd-test@" + project + ".iam.gserviceaccount.com",
		"client_id":      "123",
		"token_uri":      "https://oauth2.googleapis.com/token",
	})
	return b
}

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv(string) string { return "" }

func TestResolve(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	key := serviceAccountKey(t, "key-project")
	keyFile := write(t, dir, "key.json", key)
	dfc, _ := json.Marshal(DFCredentials{ProjectID: "billing", Location: "EU", Credentials: string(key)})
	projectDir := filepath.Join(dir, "proj")
	os.Mkdir(projectDir, 0o755)
	write(t, projectDir, DFCredentialsFile, dfc)
	adcOnly := write(t, dir, "adc.json", []byte(`{"projectId": "adc-billing"}`))

	tests := []struct {
		name string
		cfg  Config
		want Resolved // ClientOptions are checked by count only
		opts int
		err  string
	}{
		{
			name: "endpoint from the environment",
			cfg: Config{DefaultProject: "wf-project", DefaultLocation: "US", ProjectDir: projectDir,
				Getenv: func(k string) string { return map[string]string{EndpointEnv: "http://127.0.0.1:9050"}[k] }},
			want: Resolved{Project: "wf-project", DefaultDatabase: "wf-project", Location: "US", Endpoint: "http://127.0.0.1:9050",
				Source: "endpoint http://127.0.0.1:9050 (no authentication)"},
			opts: 2,
		},
		{
			name: "endpoint flag beats the environment, project flag beats settings",
			cfg: Config{Endpoint: "http://e:1", Project: "flag", DefaultProject: "wf",
				Getenv: func(string) string { return "http://env:2" }},
			want: Resolved{Project: "flag", DefaultDatabase: "wf", Endpoint: "http://e:1", Source: "endpoint http://e:1 (no authentication)"},
			opts: 2,
		},
		{
			name: "the project's .df-credentials.json with a key",
			cfg:  Config{ProjectDir: projectDir, DefaultProject: "wf", DefaultLocation: "US", Getenv: noEnv},
			want: Resolved{Project: "billing", DefaultDatabase: "wf", Location: "EU",
				Source: "service account dfd-test@key-project.iam.gserviceaccount.com from " + filepath.Join(projectDir, DFCredentialsFile)},
			opts: 2,
		},
		{
			name: ".df-credentials.json without a key is ADC",
			cfg:  Config{CredentialsFile: adcOnly, Location: "asia-south1", Getenv: noEnv},
			want: Resolved{Project: "adc-billing", DefaultDatabase: "adc-billing", Location: "asia-south1",
				Source: adcOnly + " (application default credentials)"},
			opts: 1,
		},
		{
			name: "a service-account key file, relative to the project",
			cfg:  Config{CredentialsFile: "../key.json", ProjectDir: projectDir, Getenv: noEnv},
			want: Resolved{Project: "key-project", DefaultDatabase: "key-project",
				Source: "service account dfd-test@key-project.iam.gserviceaccount.com from " + keyFile},
			opts: 2,
		},
		{
			name: "ADC with a known project",
			cfg:  Config{ProjectDir: dir, DefaultProject: "wf", Getenv: noEnv}, // no .df-credentials.json in dir
			want: Resolved{Project: "wf", DefaultDatabase: "wf", Source: "application default credentials"},
			opts: 1,
		},
		{name: "endpoint without project", cfg: Config{Endpoint: "http://e:1", Getenv: noEnv}, err: "no project"},
		{name: "missing explicit file", cfg: Config{CredentialsFile: filepath.Join(dir, "nope.json"), Getenv: noEnv}, err: "no such file"},
		{name: "not JSON", cfg: Config{CredentialsFile: write(t, dir, "bad.json", []byte("projectId: x")), Getenv: noEnv}, err: "not JSON"},
		{name: "unknown field", cfg: Config{CredentialsFile: write(t, dir, "typo.json", []byte(`{"project": "x"}`)), Getenv: noEnv}, err: `unknown field "project"`},
		{name: "no projectId", cfg: Config{CredentialsFile: write(t, dir, "noproj.json", []byte(`{"location": "EU"}`)), Getenv: noEnv}, err: "projectId field is required"},
		{name: "unsupported key type", cfg: Config{CredentialsFile: write(t, dir, "odd.json", []byte(`{"type": "api_key"}`)), Getenv: noEnv}, err: `unsupported credentials type "api_key"`},
		{name: "key string not JSON", cfg: Config{CredentialsFile: write(t, dir, "badkey.json", []byte(`{"projectId": "x", "credentials": "{"}`)), Getenv: noEnv}, err: "not a JSON key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Resolve(ctx, tt.cfg)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(r.ClientOptions) != tt.opts {
				t.Errorf("%d client options, want %d", len(r.ClientOptions), tt.opts)
			}
			r.ClientOptions = nil
			if !reflect.DeepEqual(*r, tt.want) {
				t.Errorf("got  %+v\nwant %+v", *r, tt.want)
			}
			if strings.Contains(r.String(), "PRIVATE KEY") {
				t.Error("String() shows the key")
			}
		})
	}
}

func TestParseDFCredentials(t *testing.T) {
	c, err := ParseDFCredentials([]byte(`{"projectId": "p", "location": "US"}`))
	if err != nil || c.ProjectID != "p" || c.Location != "US" || c.Credentials != "" {
		t.Errorf("%+v %v", c, err)
	}
}

func TestResolveADCWithoutProject(t *testing.T) {
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "absent.json"))
	_, err := Resolve(context.Background(), Config{Getenv: noEnv})
	if err == nil || !strings.Contains(err.Error(), "no BigQuery credentials") || !strings.Contains(err.Error(), "offline snapshot") {
		t.Errorf("err = %v", err)
	}
}

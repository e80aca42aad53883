// Package credentials decides how dfd reaches BigQuery: which endpoint, which
// identity, which billing project and which location.
//
// Sources, most specific first:
//
//   - an endpoint override (Config.Endpoint, else $DFD_BIGQUERY_ENDPOINT): a
//     BigQuery emulator or a test server, reached without authentication;
//   - a credentials file (Config.CredentialsFile, else the project's
//     .df-credentials.json when it exists): either the Dataform CLI's
//     .df-credentials.json ({"projectId", "location", "credentials"}, where
//     "credentials" is a service-account key as a JSON string, or empty for
//     Application Default Credentials), or a Google credentials JSON file
//     itself (a service-account key, an authorized-user file, …), told apart
//     by the "type" field every Google credentials file has;
//   - Application Default Credentials.
//
// The billing project (where query jobs run) is Config.Project, else the
// .df-credentials.json projectId, else the key file's project_id, else the
// workflow's defaultProject, else the project ADC knows of. The location is
// Config.Location, else the .df-credentials.json location, else the
// workflow's defaultLocation, else unset (BigQuery then infers it).
//
// Credentials stay in the process that resolves them (the daemon): the
// Resolved value holds them only inside opaque client options, and its
// String form names the source, never the secret.
package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2/google"
	"google.golang.org/api/option"
)

// EndpointEnv is the environment variable that points dfd at a BigQuery
// emulator (or any BigQuery-compatible REST endpoint) without authentication.
const EndpointEnv = "DFD_BIGQUERY_ENDPOINT"

// DFCredentialsFile is the Dataform CLI's credentials file name, looked for
// in the project directory.
const DFCredentialsFile = ".df-credentials.json"

// Scopes are the OAuth scopes dfd asks for. Drive (read-only) is there for
// the same reason the Dataform CLI asks for Drive: queries over tables
// backed by Google Sheets need it.
var Scopes = []string{
	"https://www.googleapis.com/auth/bigquery",
	"https://www.googleapis.com/auth/cloud-platform",
	"https://www.googleapis.com/auth/drive.readonly",
}

// Config is what the user and the project say about BigQuery access.
type Config struct {
	// Endpoint overrides BigQuery's endpoint (e.g. "http://127.0.0.1:9050"
	// for the emulator); requests are then sent without authentication.
	Endpoint string
	// CredentialsFile is a .df-credentials.json or a Google credentials JSON
	// file. Relative paths and "~/" are resolved against ProjectDir and the
	// home directory, as the Dataform CLI does.
	CredentialsFile string
	// ProjectDir is the Dataform project's root; its .df-credentials.json is
	// used when CredentialsFile is empty.
	ProjectDir string
	// Project and Location override everything else (command-line flags).
	Project  string
	Location string
	// DefaultProject and DefaultLocation are the workflow settings'
	// defaultProject and defaultLocation: the fallbacks.
	DefaultProject  string
	DefaultLocation string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Resolved says how to reach BigQuery.
type Resolved struct {
	// Project is the billing project: query jobs run in it.
	Project string
	// DefaultDatabase is the project of targets that name none: the
	// workflow's defaultProject, else Project.
	DefaultDatabase string
	// Location is the default job location; empty lets BigQuery decide.
	Location string
	// Endpoint is the overridden endpoint, empty for Google's.
	Endpoint string
	// Source describes where the identity comes from, for `dfd metadata
	// status` and logs (no secrets).
	Source string
	// ClientOptions carry the endpoint and credentials to Google API
	// clients.
	ClientOptions []option.ClientOption
}

func (r *Resolved) String() string {
	s := fmt.Sprintf("project %s via %s", r.Project, r.Source)
	if r.Location != "" {
		s += ", location " + r.Location
	}
	return s
}

// DFCredentials is the Dataform CLI's .df-credentials.json (the JSON form of
// its dataform.BigQuery message).
type DFCredentials struct {
	ProjectID string `json:"projectId"`
	Location  string `json:"location"`
	// Credentials is a Google credentials JSON document as a string; empty
	// means Application Default Credentials.
	Credentials string `json:"credentials"`
}

// adcLookupTimeout bounds the search for ADC's project (it may ask the GCE
// metadata server, which does not exist on a laptop).
const adcLookupTimeout = 5 * time.Second

// Resolve works out how to reach BigQuery from cfg. It reads the files it
// names but does not contact BigQuery; with Application Default Credentials
// and no project anywhere in cfg, it asks ADC for its project.
func Resolve(ctx context.Context, cfg Config) (*Resolved, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &Resolved{Location: first(cfg.Location, cfg.DefaultLocation)}

	endpoint := first(cfg.Endpoint, strings.TrimSpace(getenv(EndpointEnv)))
	if endpoint != "" {
		r.Endpoint = endpoint
		r.Project = first(cfg.Project, cfg.DefaultProject)
		if r.Project == "" {
			return nil, fmt.Errorf("BigQuery endpoint %s: no project; set one with --project or defaultProject in workflow_settings.yaml", endpoint)
		}
		r.DefaultDatabase = first(cfg.DefaultProject, r.Project)
		r.Source = "endpoint " + endpoint + " (no authentication)"
		r.ClientOptions = []option.ClientOption{option.WithEndpoint(endpoint), option.WithoutAuthentication()}
		return r, nil
	}

	path, explicit := cfg.CredentialsFile, cfg.CredentialsFile != ""
	if !explicit && cfg.ProjectDir != "" {
		path = DFCredentialsFile
	}
	if path != "" {
		path = resolvePath(cfg.ProjectDir, path)
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if err := r.fromFile(path, data, cfg); err != nil {
				return nil, err
			}
			return r, nil
		case explicit || !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("credentials file: %w", err)
		}
		// No .df-credentials.json in the project: ADC.
	}

	r.Source = "application default credentials"
	r.Project = first(cfg.Project, cfg.DefaultProject)
	if r.Project == "" {
		lctx, cancel := context.WithTimeout(ctx, adcLookupTimeout)
		defer cancel()
		creds, err := google.FindDefaultCredentials(lctx, Scopes...)
		if err != nil {
			return nil, fmt.Errorf("no BigQuery credentials: %w (run `gcloud auth application-default login`, pass --credentials, or use an offline snapshot)", err)
		}
		r.Project = creds.ProjectID
		if r.Project == "" {
			return nil, errors.New("no BigQuery project: application default credentials name none; set --project or defaultProject in workflow_settings.yaml")
		}
	}
	r.DefaultDatabase = first(cfg.DefaultProject, r.Project)
	r.ClientOptions = []option.ClientOption{option.WithScopes(Scopes...)}
	return r, nil
}

// fromFile fills r from a credentials file's contents.
func (r *Resolved) fromFile(path string, data []byte, cfg Config) error {
	var probe struct {
		Type      string `json:"type"`
		ProjectID string `json:"project_id"`
		Email     string `json:"client_email"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return fmt.Errorf("credentials file %s: not JSON: %w", path, err)
	}
	if probe.Type != "" {
		// A Google credentials file itself.
		opt, err := keyOption(probe.Type, data)
		if err != nil {
			return fmt.Errorf("credentials file %s: %w", path, err)
		}
		r.Project = first(cfg.Project, probe.ProjectID, cfg.DefaultProject)
		r.Source = describeKey(probe.Type, path, probe.Email)
		r.ClientOptions = []option.ClientOption{opt, option.WithScopes(Scopes...)}
	} else {
		dfc, err := ParseDFCredentials(data)
		if err != nil {
			return fmt.Errorf("credentials file %s: %w", path, err)
		}
		r.Project = first(cfg.Project, dfc.ProjectID)
		r.Location = first(cfg.Location, dfc.Location, cfg.DefaultLocation)
		r.ClientOptions = []option.ClientOption{option.WithScopes(Scopes...)}
		if dfc.Credentials == "" {
			r.Source = path + " (application default credentials)"
		} else {
			var key struct {
				Type  string `json:"type"`
				Email string `json:"client_email"`
			}
			if err := json.Unmarshal([]byte(dfc.Credentials), &key); err != nil {
				return fmt.Errorf("credentials file %s: \"credentials\" is not a JSON key: %w", path, err)
			}
			opt, err := keyOption(key.Type, []byte(dfc.Credentials))
			if err != nil {
				return fmt.Errorf("credentials file %s: \"credentials\": %w", path, err)
			}
			r.Source = describeKey(key.Type, path, key.Email)
			r.ClientOptions = append(r.ClientOptions, opt)
		}
	}
	if r.Project == "" {
		return fmt.Errorf("credentials file %s names no project; set --project or defaultProject in workflow_settings.yaml", path)
	}
	r.DefaultDatabase = first(cfg.DefaultProject, r.Project)
	return nil
}

// ParseDFCredentials reads a .df-credentials.json document. Like the CLI it
// requires projectId and rejects unknown fields (a typo would otherwise
// silently fall back to other credentials).
func ParseDFCredentials(data []byte) (*DFCredentials, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var c DFCredentials
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("not a .df-credentials.json file: %w", err)
	}
	if c.ProjectID == "" {
		return nil, errors.New("the projectId field is required")
	}
	return &c, nil
}

// keyOption turns a Google credentials JSON document into a client option,
// checking its declared type (option.WithCredentialsJSON trusts any type,
// which Google advises against).
func keyOption(typ string, data []byte) (option.ClientOption, error) {
	var t option.CredentialsType
	switch typ {
	case "service_account":
		t = option.ServiceAccount
	case "authorized_user":
		t = option.AuthorizedUser
	case "impersonated_service_account":
		t = option.ImpersonatedServiceAccount
	case "external_account":
		t = option.ExternalAccount
	default:
		return nil, fmt.Errorf("unsupported credentials type %q", typ)
	}
	return option.WithAuthCredentialsJSON(t, data), nil
}

func describeKey(typ, path, email string) string {
	what := strings.ReplaceAll(typ, "_", " ")
	if email != "" {
		return fmt.Sprintf("%s %s from %s", what, email, path)
	}
	return fmt.Sprintf("%s from %s", what, path)
}

// resolvePath resolves p like the CLI's actuallyResolve: "~/" is the home
// directory, relative paths are relative to dir.
func resolvePath(dir, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, strings.TrimPrefix(p, "~"))
		}
	}
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	return p
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

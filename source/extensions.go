package source

// RequireExtensions are the extensions tried, in this order, for a
// require() without one in a project's compile-time code, as the official
// CLI configures vm2 (sourceExtensions): the engine's loader resolves
// modules with them and go-to-definition on require() follows them.
var RequireExtensions = []string{".js", ".sql", ".sqlx", ".yaml", ".yml", ".json"}

// ProjectFileExtensions are those of the files a compile reads: what
// core's main() loads (definitions' .js and .sqlx files, actions.yaml,
// includes' .js), what a require() resolves (RequireExtensions) and the
// notebooks actions.yaml names (.ipynb, read as JSON).
var ProjectFileExtensions = append(append([]string(nil), RequireExtensions...), ".ipynb")

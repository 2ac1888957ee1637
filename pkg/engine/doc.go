// Package engine is the vulnerability scan engine run by the scan workers.
//
// New(opts...) builds an Engine; Engine.Run(ctx, Input, progress) analyzes
// the checked-out repositories of Input.Repos (code in Python,
// JavaScript/TypeScript, Go, Java, PHP and Ruby: each file parsed with
// tree-sitter, checked by the pattern rules and lowered to a shared IR, then
// each repository's IR analysed whole by the dataflow analysis against the
// flow rules and library models — see README.md; secrets with gitleaks, Dockerfiles,
// Kubernetes manifests, Terraform and CI workflows with iac), probes
// Input.TargetURLs through Input.HTTPClient (live), and passes every
// candidate through the automated verification stage (verify). Run returns
// Result{Findings, Stats}; each Finding carries a category from the findings
// contract, a severity, a repository-relative location, a redacted snippet,
// tags (rule id, CWE, OWASP Top 10 2021, language), a Mermaid trace for taint
// findings and a fingerprint that ignores line numbers. Confirmed reports
// whether the candidate passed automated verification; applying the
// organization's verification mode is up to the caller.
//
// Limits: files over WithMaxFileSize, binary, generated, minified, vendored
// and excluded files ("exclude: <glob>" lines of Input.CustomContext) are
// skipped and counted in Stats.SkippedReasons, as are files whose syntax tree
// or analysis time exceeds WithFileLimits; the dataflow analysis of a
// repository is bounded by dataflow.Budget's defaults and reports what it had to leave
// in Stats.Flow. Input.AuthInstructions is never
// logged; its "Header: value" lines are sent with live-target requests.
package engine

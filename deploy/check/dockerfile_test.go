package check

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const dockerDir = "../docker"

// images maps each image to the main package it builds and whether it links
// C code (tree-sitter, through cgo).
var images = map[string]struct {
	pkg string
	cgo bool
}{
	"gateway":     {"./gateway/cmd/gateway", false},
	"vulnscanctl": {"./gateway/cmd/vulnscanctl", false},
	"auth":        {"./services/auth/cmd/auth", false},
	"estimation":  {"./services/estimation/cmd/estimation", false},
	"scan":        {"./services/scan/cmd/scan", true},
	"findings":    {"./services/findings/cmd/findings", false},
	"dbroles":     {"./pkg/cmd/vulnscan-dbroles", false},
}

// instruction is one Dockerfile instruction with continuations joined.
type instruction struct {
	cmd, args string
}

func parseDockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		full := cur.String()
		cur.Reset()
		cmd, args, _ := strings.Cut(full, " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
	}
	require.Zero(t, cur.Len(), "%s: dangling line continuation", path)
	return out
}

// TestDockerfiles: every image is multi-stage, builds its process with the
// version stamped in, and ends in a nonroot distroless image.
func TestDockerfiles(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(dockerDir)
	require.NoError(t, err)
	var found []string
	for _, e := range entries {
		if e.IsDir() {
			found = append(found, e.Name())
		}
	}
	require.ElementsMatch(t, sortedKeys(images), found, "one Dockerfile per image")

	final := regexp.MustCompile(`^gcr\.io/distroless/(static|base)-debian12:nonroot(@sha256:[0-9a-f]{64})?$`)
	for name, want := range images {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ins := parseDockerfile(t, filepath.Join(dockerDir, name, "Dockerfile"))
			var froms []int
			for i, in := range ins {
				if in.cmd == "FROM" {
					froms = append(froms, i)
				}
			}
			require.GreaterOrEqual(t, len(froms), 2, "multi-stage build")
			last := froms[len(froms)-1]
			fromArgs := strings.Fields(ins[last].args)
			require.Regexp(t, final, fromArgs[0], "final stage must be a nonroot distroless image")
			if want.cgo {
				require.Contains(t, fromArgs[0], "/base-debian12", "cgo binary needs glibc")
			} else {
				require.Contains(t, fromArgs[0], "/static-debian12", "static binary on distroless/static")
			}

			// Build stage: ARG VERSION, then go build of the right package
			// with the version stamped into main.version.
			var argVersion, built bool
			for _, in := range ins[:last] {
				switch in.cmd {
				case "ARG":
					if in.args == "VERSION" || strings.HasPrefix(in.args, "VERSION=") {
						argVersion = true
					}
				case "ENV":
					if want.cgo {
						require.NotContains(t, in.args, "CGO_ENABLED=0")
					} else if strings.Contains(in.args, "CGO_ENABLED") {
						require.Contains(t, in.args, "CGO_ENABLED=0")
					}
				case "RUN":
					if strings.Contains(in.args, "go build") {
						require.True(t, argVersion, "ARG VERSION must precede go build")
						require.Regexp(t, `-X main\.version=\$\{?VERSION\}?`, in.args)
						require.Regexp(t, `-o /out/`+regexp.QuoteMeta(name)+`\s+`+regexp.QuoteMeta(want.pkg)+`(\s|$)`, in.args)
						if !want.cgo {
							require.Contains(t, in.args+" "+envOf(ins[:last]), "CGO_ENABLED=0", "static build")
						}
						built = true
					}
				}
			}
			require.True(t, argVersion, "ARG VERSION")
			require.True(t, built, "go build of %s", want.pkg)

			// Final stage: only the binary, as nonroot, exec-form entrypoint.
			var copied, user bool
			for _, in := range ins[last+1:] {
				switch in.cmd {
				case "COPY":
					require.Contains(t, in.args, "--from=", "final stage copies only from the build stage")
					copied = true
				case "RUN":
					t.Fatalf("final stage runs commands: %s", in.args)
				case "USER":
					require.Regexp(t, `^(nonroot|65532)(:(nonroot|65532))?$`, in.args)
					user = true
				case "ENTRYPOINT":
					require.True(t, strings.HasPrefix(in.args, "["), "exec-form ENTRYPOINT")
				}
			}
			require.True(t, copied, "final stage copies the binary")
			require.True(t, user, "final stage sets USER nonroot")
		})
	}
}

func envOf(ins []instruction) string {
	var b strings.Builder
	for _, in := range ins {
		if in.cmd == "ENV" {
			b.WriteString(in.args + " ")
		}
	}
	return b.String()
}

// TestDeploymentsUseBuiltImages: every process image the base references has
// a Dockerfile; scan-api and scan-worker share the scan image.
func TestDeploymentsUseBuiltImages(t *testing.T) {
	t.Parallel()
	r := render(t, "base")
	for name, d := range r.deployments {
		img := d.Spec.Template.Spec.Containers[0].Image
		require.True(t, strings.HasPrefix(img, "vulnscan/"), "%s: %s", name, img)
		_, ok := images[strings.TrimPrefix(img, "vulnscan/")]
		require.True(t, ok, "%s: image %s has no Dockerfile", name, img)
	}
	require.NotEmpty(t, r.jobs, "base renders the dbroles Job")
	for name, j := range r.jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			_, ok := images[strings.TrimPrefix(c.Image, "vulnscan/")]
			require.True(t, strings.HasPrefix(c.Image, "vulnscan/") && ok, "Job %s: image %s has no Dockerfile", name, c.Image)
		}
	}
	require.Equal(t, r.deployments["scan-api"].Spec.Template.Spec.Containers[0].Image,
		r.deployments["scan-worker"].Spec.Template.Spec.Containers[0].Image)
}

package detect

import (
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// memSource is a repository held in memory: file contents by path.
type memSource map[string]string

func (m memSource) Files() []File {
	out := make([]File, 0, len(m))
	for p, c := range m {
		out = append(out, File{Path: p, Size: int64(len(c))})
	}
	return out
}

func (m memSource) ReadFile(p string) ([]byte, error) {
	c, ok := m[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	if len(c) > MaxReadBytes {
		c = c[:MaxReadBytes]
	}
	return []byte(c), nil
}

// code returns n non-blank lines of a source file, with blank lines between
// them that must not count.
func code(n int, line string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s // %d\n\n", line, i)
	}
	return b.String()
}

func pyCode(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "x%d = %d\n   \n", i, i)
	}
	return b.String()
}

// TestManifestKinds: each build manifest the detector knows names its
// application and describes its language, framework, ORM and stores.
func TestManifestKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  memSource
		want []wantApp
	}{
		{"go grpc service", memSource{
			"go.mod":  "module example.com/acme/ledgerd\n\ngo 1.23\n\nrequire (\n\tgoogle.golang.org/grpc v1.60.0\n\tgithub.com/jackc/pgx/v5 v5.5.0\n)\n",
			"main.go": "package main\n\nfunc main() { s := grpc.NewServer(); _ = s }\n",
		}, []wantApp{{"ledgerd", ".", "Go 1.23 gRPC gRPC service on PostgreSQL"}}},
		{"go http without framework", memSource{
			"go.mod":  "module acme/web\n\ngo 1.21\n",
			"main.go": "package main\n\nfunc main() { http.ListenAndServe(\":8080\", nil) }\n",
		}, []wantApp{{"web", ".", "Go 1.21 HTTP service"}}},
		{"go library", memSource{
			"go.mod": "module github.com/acme/strutil\n\ngo 1.22\n",
			"s.go":   "package strutil\n\nfunc Rev(s string) string { return s }\n",
		}, []wantApp{{"strutil", ".", "Go 1.22 library"}}},
		{"go cli", memSource{
			"go.mod":  "module acme/tool\n\ngo 1.22\n\nrequire github.com/spf13/cobra v1.8.0\n",
			"main.go": "package main\n\nfunc main() {}\n",
		}, []wantApp{{"tool", ".", "Go 1.22 Cobra command-line tool"}}},
		{"node cli with typescript", memSource{
			"package.json":  `{"name": "@acme/deploy-cli", "dependencies": {"commander": "^11"}, "devDependencies": {"typescript": "^5"}}`,
			"src/index.ts":  "export const run = () => 1;\n",
			"README.md":     "# docs are not code\n",
			"docs/guide.js": "console.log('documentation');\n",
		}, []wantApp{{"deploy-cli", ".", "TypeScript Commander Node.js command-line tool"}}},
		{"node server with prisma and compose", memSource{
			"package.json":       `{"name": "shop", "dependencies": {"fastify": "^4", "@prisma/client": "^5", "ioredis": "^5"}}`,
			"server.js":          "const app = require('fastify')();\n",
			"docker-compose.yml": "services:\n  db:\n    image: postgres:16\n  cache:\n    image: \"redis:7\"\n",
			"Dockerfile":         "FROM node:20\n",
		}, []wantApp{{"shop", ".", "JavaScript Fastify Node.js web server using Prisma on Redis and PostgreSQL, packaged as a container image"}}},
		{"django from manage.py", memSource{
			"manage.py":       "import sys\nif __name__ == '__main__':\n    main()\n",
			"app/models.py":   pyCode(3),
			"app/__init__.py": "",
		}, []wantApp{{"repo", ".", "Python 3 Django web application using the Django ORM"}}},
		{"fastapi pyproject", memSource{
			"pyproject.toml": "[project]\nname = \"pricing\"\ndependencies = [\"fastapi>=0.100\", \"asyncpg>=0.29\", \"SQLAlchemy[asyncio]>=2\"]\n",
			"pricing/api.py": pyCode(5),
		}, []wantApp{{"pricing", ".", "Python 3 FastAPI web API using SQLAlchemy on PostgreSQL"}}},
		{"python 2 setup.py package", memSource{
			"setup.py":      "setup(name='oldlib', python_requires='>=2.7', install_requires=['redis>=2'])\n",
			"oldlib/lib.py": pyCode(2),
		}, []wantApp{{"oldlib", ".", "Python 2 package on Redis"}}},
		{"pipfile worker", memSource{
			"Pipfile":  "[packages]\ncelery = \"*\"\npika = \"*\"\n",
			"tasks.py": pyCode(4),
		}, []wantApp{{"repo", ".", "Python 3 Celery background worker on RabbitMQ"}}},
		{"gradle kotlin", memSource{
			"build.gradle.kts":       "dependencies {\n  implementation(\"io.ktor:ktor-server-core:2.3.0\")\n  implementation(\"redis.clients:jedis:5.0.0\")\n}\n",
			"settings.gradle.kts":    "rootProject.name = \"alerts\"\n",
			"src/main/kotlin/App.kt": "fun main() {\n  println(\"x\")\n}\n",
		}, []wantApp{{"alerts", ".", "Kotlin Ktor web service on Redis"}}},
		{"gradle java spring plugin", memSource{
			"build.gradle":           "plugins { id 'org.springframework.boot' version '3.2.0' }\njava { toolchain { languageVersion.set(JavaLanguageVersion.of(21)) } }\n",
			"src/main/java/App.java": "class App {\n  public static void main(String[] a) {}\n}\n",
		}, []wantApp{{"repo", ".", "Java 21 Spring Boot application"}}},
		{"maven aggregator and module", memSource{
			"pom.xml":         "<project><artifactId>parent</artifactId><packaging>pom</packaging></project>",
			"core/pom.xml":    "<project><parent><artifactId>parent</artifactId></parent><artifactId>core</artifactId><properties><maven.compiler.release>1.8</maven.compiler.release></properties></project>",
			"core/src/A.java": "class A {\n}\n",
		}, []wantApp{{"core", "core", "Java 8 application"}}},
		{"sinatra with pg", memSource{
			"Gemfile": "source 'https://rubygems.org'\ngem 'sinatra'\ngem \"pg\"\n",
			"app.rb":  "get '/' do\n  'hi'\nend\n",
		}, []wantApp{{"repo", ".", "Ruby Sinatra web application on PostgreSQL"}}},
		{"symfony with mysql", memSource{
			"composer.json":  `{"name": "acme/shop", "require": {"symfony/console": "^6", "ext-pdo_mysql": "*", "doctrine/orm": "^2"}}`,
			"src/Kernel.php": "<?php\nclass Kernel {}\n",
		}, []wantApp{{"shop", ".", "PHP Symfony web application using Doctrine ORM on MySQL"}}},
		{"dotnet worker", memSource{
			"Jobs/Jobs.csproj": `<Project Sdk="Microsoft.NET.Sdk.Worker"><PropertyGroup><TargetFramework>net9.0</TargetFramework></PropertyGroup><PackageReference Include="StackExchange.Redis" /></Project>`,
			"Jobs/Program.cs":  "class Program {\n  static void Main() {}\n}\n",
		}, []wantApp{{"Jobs", "Jobs", "C# .NET 9.0 .NET Worker Service background worker on Redis"}}},
		{"rust binary with tokio-postgres", memSource{
			"Cargo.toml":  "[package]\nname = \"indexer\"\n\n[dependencies]\ntokio-postgres = \"0.7\"\nclap = { version = \"4\" }\n",
			"src/main.rs": "fn main() {\n    println!(\"x\");\n}\n",
		}, []wantApp{{"indexer", ".", "Rust clap command-line tool on PostgreSQL"}}},
		{"rust library", memSource{
			"Cargo.toml": "[package]\nname = \"parse\"\n\n[dependencies.serde]\nversion = \"1\"\n",
			"src/lib.rs": "pub fn f() {}\n",
		}, []wantApp{{"parse", ".", "Rust library"}}},
		{"rust workspace", memSource{
			"Cargo.toml":      "[workspace]\nmembers = [\"cli\"]\n",
			"cli/Cargo.toml":  "[package]\nname = \"cli\"\n",
			"cli/src/main.rs": "fn main() {}\n",
		}, []wantApp{{"cli", "cli", "Rust application"}}},
		{"manifest without code is no app", memSource{
			"package.json": `{"name": "empty", "dependencies": {"express": "^4"}}`,
			"main.go":      "package main\n\nfunc main() {}\n",
		}, []wantApp{{"repo", ".", "Go application without a build manifest"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Analyze(tc.src, "repo")
			var got []wantApp
			for _, a := range res.Apps {
				got = append(got, wantApp{a.Name, a.Root, a.Architecture})
			}
			require.ElementsMatch(t, tc.want, got)
		})
	}
}

// TestInfrastructureOnly: a repository without application code is priced
// by its infrastructure definitions.
func TestInfrastructureOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  memSource
		want []wantApp
	}{
		{"helm replaces kubernetes", memSource{
			"charts/api/Chart.yaml":            "apiVersion: v2\nkind: whatever\nname: api\n",
			"charts/api/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\n",
		}, []wantApp{{"api-helm", "charts/api", "Helm chart deploying to Kubernetes"}}},
		{"cloudformation", memSource{
			"infra/stack.yaml": "AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\n",
		}, []wantApp{{"infra-cloudformation", "infra", "AWS CloudFormation infrastructure-as-code"}}},
		{"terraform providers", memSource{
			"tf/main.tf":    "provider \"google\" {}\nresource \"aws_s3_bucket\" \"b\" {}\n",
			"tf/net/vpc.tf": "resource \"azurerm_virtual_network\" \"v\" {}\n",
		}, []wantApp{{"tf-terraform", "tf", "Terraform infrastructure-as-code for AWS, Azurerm and Google Cloud"}}},
		{"compose stack", memSource{
			"deploy/compose.yaml": "services:\n  q:\n    image: bitnami/rabbitmq:3\n  s:\n    image: library/mariadb\n",
		}, []wantApp{{"deploy-compose", "deploy", "Docker Compose stack with RabbitMQ and MariaDB"}}},
		{"kubernetes kinds across dirs", memSource{
			"k8s/a/svc.yaml": "apiVersion: v1\nkind: Service\n",
			"k8s/b/job.yml":  "apiVersion: batch/v1\nkind: CronJob\n",
		}, []wantApp{{"k8s-kubernetes", "k8s", "Kubernetes manifests (CronJob and Service)"}}},
		{"dockerfiles in two dirs", memSource{
			"a/Dockerfile":      "FROM --platform=linux/amd64 alpine:3.19\n",
			"b/prod.Dockerfile": "FROM scratch\n",
		}, []wantApp{{"repo-container", ".", "Container image definition (Dockerfile based on alpine:3.19)"}}},
		{"shell scripts only", memSource{
			"scripts/run.sh": "#!/bin/sh\necho hi\n",
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Analyze(tc.src, "repo")
			var got []wantApp
			for _, a := range res.Apps {
				got = append(got, wantApp{a.Name, a.Root, a.Architecture})
				require.Equal(t, 1, a.Credits, "infrastructure holds no code lines")
			}
			require.ElementsMatch(t, tc.want, got)
		})
	}
}

// TestSkippedFilesAndLanguages: vendored, generated, dependency and
// documentation files are neither code of an application nor counted in
// the repository's languages; blank lines never count.
func TestSkippedFilesAndLanguages(t *testing.T) {
	t.Parallel()
	src := memSource{
		"go.mod":                  "module acme/app\n\ngo 1.22\n",
		"main.go":                 code(10, "package main"),
		"vendor/x/y.go":           code(500, "package y"),
		"node_modules/z/index.js": code(500, "var z"),
		"third_party/lib.go":      code(500, "package lib"),
		"testdata/case.go":        code(500, "package t"),
		"gen.pb.go":               "// Code generated by protoc-gen-go. DO NOT EDIT.\n" + code(500, "package main"),
		"web/app.min.js":          strings.Repeat("var a=1;", 10),
		"docs/tool.py":            pyCode(500),
		"scripts/setup.sh":        "#!/bin/sh\necho one\n\necho two\n",
		"logo.png":                "\x89PNG\r\n\x1a\n",
		"notes.txt":               "plain text\n",
	}
	res := Analyze(src, "repo")
	require.Len(t, res.Apps, 1)
	app := res.Apps[0]
	require.Equal(t, "app", app.Name)
	require.Equal(t, 13, app.CodeLines, "the non-blank lines of main.go and the shell script")
	require.Equal(t, 2, app.SourceFiles)
	require.Equal(t, map[string]int{"Go": 10, "Shell": 3}, app.Languages)
	require.Equal(t, len(src), res.Files, "every file is counted in files")
	require.Equal(t, 10, res.Languages["Go"])
	require.Equal(t, 3, res.Languages["Shell"])
	require.NotContains(t, res.Languages, "Python")
	require.NotContains(t, res.Languages, "JavaScript")
}

// TestNestedAppsSplitCode: code belongs to the deepest application holding
// it, and each application is priced on its own code.
func TestNestedAppsSplitCode(t *testing.T) {
	t.Parallel()
	src := memSource{
		"go.mod":                "module acme/root\n\ngo 1.22\n",
		"cmd/root/main.go":      code(6000, "package main"),
		"tools/gen/go.mod":      "module acme/gen\n\ngo 1.22\n",
		"tools/gen/gen.go":      code(40, "package gen"),
		"tools/gen/sub/more.go": code(2, "package sub"),
	}
	res := Analyze(src, "repo")
	byName := map[string]App{}
	for _, a := range res.Apps {
		byName[a.Name] = a
	}
	require.Len(t, byName, 2)
	require.Equal(t, 6000, byName["root"].CodeLines)
	require.Equal(t, 1, byName["root"].SourceFiles)
	require.Equal(t, 2, byName["root"].Credits, "1 + 6000/5000")
	require.Equal(t, 42, byName["gen"].CodeLines)
	require.Equal(t, 2, byName["gen"].SourceFiles)
	require.Equal(t, 1, byName["gen"].Credits)
	require.Equal(t, 3, res.Credits)
	require.Equal(t, "tools/gen", byName["gen"].Root)
}

// TestLargeFilesAreNotRead: a file over four times MaxReadBytes is counted
// as a file but its lines are not.
func TestLargeFilesAreNotRead(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x := 1\n", 4*MaxReadBytes/7+10)
	res := Analyze(memSource{"go.mod": "module m\n\ngo 1.22\n", "a.go": code(3, "package m"), "big.go": huge}, "repo")
	require.Len(t, res.Apps, 1)
	require.Equal(t, 3, res.Apps[0].CodeLines)
	require.Equal(t, 3, res.Files)
}

func TestCreditsArithmetic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lines, files, want int
	}{
		{0, 0, 1},
		{LinesPerCredit - 1, FilesPerCredit - 1, 1},
		{LinesPerCredit, 0, 2},
		{0, FilesPerCredit, 2},
		{LinesPerCredit, FilesPerCredit, 3},
		{10*LinesPerCredit + 1, 3*FilesPerCredit + 1, 14},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Credits(tc.lines, tc.files), "%d lines, %d files", tc.lines, tc.files)
	}
}

func TestHelpers(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", andList(nil))
	require.Equal(t, "a", andList([]string{"a"}))
	require.Equal(t, "a and b", andList([]string{"a", "b"}))
	require.Equal(t, "a, b and c", andList([]string{"a", "b", "c"}))
	require.Equal(t, ".", commonDir([]string{"a/b", "c"}))
	require.Equal(t, "a", commonDir([]string{"a/b/c", "a/d", "a"}))
	require.Equal(t, "a/b", commonDir([]string{"a/b", "a/b/c"}))
	require.Equal(t, []string{"a", "b"}, dedupe([]string{"a", "a", "b", "b"}))
	require.Equal(t, 2, countLines([]byte("a\n \n\t\nb")))
	require.True(t, under("x/y", "."))
	require.True(t, under("x/y", "x"))
	require.False(t, under("xy/z", "x"))
	require.True(t, skipped("a/node_modules/b.js"))
	require.True(t, skipped("build/out.go"))
	require.False(t, skipped("builder/out.go"))
	require.Equal(t, " for AWS and Google Cloud", listSuffix(" for ", map[string]bool{"Aws": true, "Gcp": true, "Google": true}))
}

// TestNamesFitToStore: an application's name and root come from the
// repository's manifests and tree, whatever their bytes; the result holds
// them as valid UTF-8 without NUL (read as Windows-1252, NUL as U+FFFD), so
// that it can be stored and sent. A NUL made the estimation's job fail for
// every attempt: PostgreSQL refuses it in jsonb.
func TestNamesFitToStore(t *testing.T) {
	t.Parallel()
	res := Analyze(memSource{
		"caf\xe9/package.json": `{"name":"shop\u0000front","dependencies":{"express":"4.17.0"}}`,
		"caf\xe9/index.js":     code(10, "const x = 1;"),
	}, "repo")
	require.Len(t, res.Apps, 1)
	require.Equal(t, "shop\uFFFDfront", res.Apps[0].Name)
	require.Equal(t, "café", res.Apps[0].Root)
	for _, s := range []string{res.Apps[0].Name, res.Apps[0].Root, res.Apps[0].Architecture} {
		require.True(t, utf8.ValidString(s), "%q", s)
		require.NotContains(t, s, "\x00")
	}
}

package detect

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// candidate is an application suggested by one manifest.
type candidate struct {
	eco        string // go, node, python, java, ruby, php, dotnet, rust
	name       string
	language   string // e.g. "Python 3", "TypeScript", "Java 17"
	codeLangs  []string
	deps       []string
	aggregator bool
	goMain     bool
}

type feature struct {
	label string
	kind  string // framework, orm, store, frontend, cli
	what  string // for frameworks: the kind of application
}

// features maps a lower-case dependency name to what it tells.
var features = map[string]feature{
	// Go
	"github.com/gin-gonic/gin":               {"Gin", "framework", "web service"},
	"github.com/labstack/echo/v4":            {"Echo", "framework", "web service"},
	"github.com/go-chi/chi/v5":               {"chi", "framework", "web service"},
	"github.com/go-chi/chi":                  {"chi", "framework", "web service"},
	"github.com/gofiber/fiber/v2":            {"Fiber", "framework", "web service"},
	"github.com/gorilla/mux":                 {"gorilla/mux", "framework", "web service"},
	"google.golang.org/grpc":                 {"gRPC", "framework", "gRPC service"},
	"github.com/spf13/cobra":                 {"Cobra", "cli", "command-line tool"},
	"gorm.io/gorm":                           {"GORM", "orm", ""},
	"github.com/jackc/pgx/v5":                {"PostgreSQL", "store", ""},
	"github.com/jackc/pgx/v4":                {"PostgreSQL", "store", ""},
	"github.com/lib/pq":                      {"PostgreSQL", "store", ""},
	"gorm.io/driver/postgres":                {"PostgreSQL", "store", ""},
	"github.com/go-sql-driver/mysql":         {"MySQL", "store", ""},
	"gorm.io/driver/mysql":                   {"MySQL", "store", ""},
	"github.com/mattn/go-sqlite3":            {"SQLite", "store", ""},
	"go.mongodb.org/mongo-driver":            {"MongoDB", "store", ""},
	"github.com/redis/go-redis/v9":           {"Redis", "store", ""},
	"github.com/go-redis/redis/v8":           {"Redis", "store", ""},
	"github.com/aws/aws-sdk-go-v2":           {"AWS", "store", ""},
	"github.com/segmentio/kafka-go":          {"Kafka", "store", ""},
	"github.com/ibm/sarama":                  {"Kafka", "store", ""},
	"github.com/rabbitmq/amqp091-go":         {"RabbitMQ", "store", ""},
	"github.com/elastic/go-elasticsearch/v8": {"Elasticsearch", "store", ""},
	// Python
	"flask":            {"Flask", "framework", "web application"},
	"django":           {"Django", "framework", "web application"},
	"fastapi":          {"FastAPI", "framework", "web API"},
	"starlette":        {"Starlette", "framework", "web API"},
	"tornado":          {"Tornado", "framework", "web application"},
	"aiohttp":          {"aiohttp", "framework", "web service"},
	"pyramid":          {"Pyramid", "framework", "web application"},
	"click":            {"Click", "cli", "command-line tool"},
	"typer":            {"Typer", "cli", "command-line tool"},
	"sqlalchemy":       {"SQLAlchemy", "orm", ""},
	"flask-sqlalchemy": {"SQLAlchemy", "orm", ""},
	"peewee":           {"Peewee", "orm", ""},
	"tortoise-orm":     {"Tortoise ORM", "orm", ""},
	"psycopg2":         {"PostgreSQL", "store", ""},
	"psycopg2-binary":  {"PostgreSQL", "store", ""},
	"psycopg":          {"PostgreSQL", "store", ""},
	"asyncpg":          {"PostgreSQL", "store", ""},
	"pymysql":          {"MySQL", "store", ""},
	"mysqlclient":      {"MySQL", "store", ""},
	"pymongo":          {"MongoDB", "store", ""},
	"motor":            {"MongoDB", "store", ""},
	"redis":            {"Redis", "store", ""},
	"celery":           {"Celery", "framework", "background worker"},
	"boto3":            {"AWS", "store", ""},
	"pika":             {"RabbitMQ", "store", ""},
	"elasticsearch":    {"Elasticsearch", "store", ""},
	// JavaScript / TypeScript
	"express":         {"Express", "framework", "web server"},
	"koa":             {"Koa", "framework", "web server"},
	"fastify":         {"Fastify", "framework", "web server"},
	"@hapi/hapi":      {"hapi", "framework", "web server"},
	"@nestjs/core":    {"NestJS", "framework", "web API"},
	"next":            {"Next.js", "framework", "server-rendered web application"},
	"nuxt":            {"Nuxt", "framework", "server-rendered web application"},
	"@remix-run/node": {"Remix", "framework", "server-rendered web application"},
	"react":           {"React", "frontend", ""},
	"vue":             {"Vue", "frontend", ""},
	"@angular/core":   {"Angular", "frontend", ""},
	"svelte":          {"Svelte", "frontend", ""},
	"electron":        {"Electron", "framework", "desktop application"},
	"commander":       {"Commander", "cli", "command-line tool"},
	"yargs":           {"yargs", "cli", "command-line tool"},
	"prisma":          {"Prisma", "orm", ""},
	"@prisma/client":  {"Prisma", "orm", ""},
	"sequelize":       {"Sequelize", "orm", ""},
	"typeorm":         {"TypeORM", "orm", ""},
	"mongoose":        {"Mongoose", "orm", ""},
	"knex":            {"Knex", "orm", ""},
	"pg":              {"PostgreSQL", "store", ""},
	"mysql":           {"MySQL", "store", ""},
	"mysql2":          {"MySQL", "store", ""},
	"sqlite3":         {"SQLite", "store", ""},
	"better-sqlite3":  {"SQLite", "store", ""},
	"mongodb":         {"MongoDB", "store", ""},
	"ioredis":         {"Redis", "store", ""},
	"kafkajs":         {"Kafka", "store", ""},
	"amqplib":         {"RabbitMQ", "store", ""},
	"aws-sdk":         {"AWS", "store", ""},
	// Java / Kotlin
	"spring-boot-starter-web":          {"Spring Boot", "framework", "web application"},
	"spring-boot-starter-webflux":      {"Spring Boot WebFlux", "framework", "reactive web service"},
	"spring-boot-starter":              {"Spring Boot", "framework", "application"},
	"quarkus-resteasy":                 {"Quarkus", "framework", "web service"},
	"quarkus-resteasy-reactive":        {"Quarkus", "framework", "web service"},
	"micronaut-http-server-netty":      {"Micronaut", "framework", "web service"},
	"ktor-server-core":                 {"Ktor", "framework", "web service"},
	"jakarta.servlet-api":              {"Jakarta Servlet", "framework", "web application"},
	"javax.servlet-api":                {"Java Servlet", "framework", "web application"},
	"spring-boot-starter-data-jpa":     {"Spring Data JPA (Hibernate)", "orm", ""},
	"hibernate-core":                   {"Hibernate", "orm", ""},
	"mybatis":                          {"MyBatis", "orm", ""},
	"postgresql":                       {"PostgreSQL", "store", ""},
	"mysql-connector-java":             {"MySQL", "store", ""},
	"mysql-connector-j":                {"MySQL", "store", ""},
	"h2":                               {"H2", "store", ""},
	"spring-boot-starter-data-mongodb": {"MongoDB", "store", ""},
	"spring-boot-starter-data-redis":   {"Redis", "store", ""},
	"jedis":                            {"Redis", "store", ""},
	"kafka-clients":                    {"Kafka", "store", ""},
	"spring-kafka":                     {"Kafka", "store", ""},
	// Ruby
	"rails":        {"Ruby on Rails", "framework", "web application"},
	"sinatra":      {"Sinatra", "framework", "web application"},
	"hanami":       {"Hanami", "framework", "web application"},
	"grape":        {"Grape", "framework", "web API"},
	"thor":         {"Thor", "cli", "command-line tool"},
	"activerecord": {"ActiveRecord", "orm", ""},
	"sequel":       {"Sequel", "orm", ""},
	"mongoid":      {"MongoDB", "store", ""},
	"sidekiq":      {"Redis", "store", ""},
	// PHP
	"laravel/framework":        {"Laravel", "framework", "web application"},
	"laravel/lumen-framework":  {"Lumen", "framework", "web API"},
	"symfony/framework-bundle": {"Symfony", "framework", "web application"},
	"slim/slim":                {"Slim", "framework", "web API"},
	"cakephp/cakephp":          {"CakePHP", "framework", "web application"},
	"doctrine/orm":             {"Doctrine ORM", "orm", ""},
	"predis/predis":            {"Redis", "store", ""},
	"mongodb/mongodb":          {"MongoDB", "store", ""},
	// C#
	"microsoft.net.sdk.web":                   {"ASP.NET Core", "framework", "web application"},
	"microsoft.net.sdk.worker":                {".NET Worker Service", "framework", "background worker"},
	"microsoft.entityframeworkcore":           {"Entity Framework Core", "orm", ""},
	"microsoft.entityframeworkcore.sqlserver": {"SQL Server", "store", ""},
	"npgsql.entityframeworkcore.postgresql":   {"PostgreSQL", "store", ""},
	"npgsql":                                  {"PostgreSQL", "store", ""},
	"microsoft.entityframeworkcore.sqlite":    {"SQLite", "store", ""},
	"pomelo.entityframeworkcore.mysql":        {"MySQL", "store", ""},
	"stackexchange.redis":                     {"Redis", "store", ""},
	"mongodb.driver":                          {"MongoDB", "store", ""},
	"dapper":                                  {"Dapper", "orm", ""},
	// Rust
	"actix-web":      {"Actix Web", "framework", "web service"},
	"axum":           {"Axum", "framework", "web service"},
	"rocket":         {"Rocket", "framework", "web service"},
	"warp":           {"warp", "framework", "web service"},
	"tonic":          {"tonic", "framework", "gRPC service"},
	"clap":           {"clap", "cli", "command-line tool"},
	"diesel":         {"Diesel", "orm", ""},
	"sqlx":           {"SQLx", "orm", ""},
	"sea-orm":        {"SeaORM", "orm", ""},
	"tokio-postgres": {"PostgreSQL", "store", ""},
	"mongodb-rust":   {"MongoDB", "store", ""},
}

// composeStores maps image names of docker-compose services to data stores.
var composeStores = map[string]string{
	"postgres": "PostgreSQL", "postgis/postgis": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB",
	"redis": "Redis", "mongo": "MongoDB", "elasticsearch": "Elasticsearch", "rabbitmq": "RabbitMQ",
	"memcached": "Memcached", "bitnami/kafka": "Kafka", "confluentinc/cp-kafka": "Kafka", "minio/minio": "MinIO",
}

func (a *analysis) findApps() {
	dirs := make([]string, 0, len(a.byDir))
	for d := range a.byDir {
		if d != "." && skipped(d+"/x") {
			continue
		}
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		var cands []candidate
		for _, base := range a.byDir[d] {
			switch {
			case base == "go.mod":
				cands = append(cands, a.goCandidate(d))
			case base == "package.json":
				cands = append(cands, a.nodeCandidate(d))
			case base == "pom.xml":
				cands = append(cands, a.mavenCandidate(d))
			case base == "build.gradle" || base == "build.gradle.kts":
				cands = append(cands, a.gradleCandidate(d, base))
			case base == "Gemfile":
				cands = append(cands, a.rubyCandidate(d))
			case base == "composer.json":
				cands = append(cands, a.phpCandidate(d))
			case strings.HasSuffix(base, ".csproj"):
				cands = append(cands, a.dotnetCandidate(d, base))
			case base == "Cargo.toml":
				cands = append(cands, a.rustCandidate(d))
			}
		}
		if pc, ok := a.pythonCandidate(d); ok {
			cands = append(cands, pc)
		}
		a.addApp(d, cands)
	}
	if len(a.apps) == 0 {
		a.fallback()
	}
}

// addApp makes one application of the candidates found in dir.
func (a *analysis) addApp(dir string, cands []candidate) {
	code := a.codeIn(dir)
	var kept []candidate
	seen := map[string]bool{}
	for _, c := range cands {
		if c.aggregator || seen[c.eco] {
			continue
		}
		lines := 0
		for _, l := range c.codeLangs {
			lines += code[l]
		}
		if lines == 0 {
			continue
		}
		seen[c.eco] = true
		kept = append(kept, c)
	}
	if len(kept) == 0 {
		return
	}
	score := func(c candidate) int {
		s := 0
		for _, l := range c.codeLangs {
			s += code[l]
		}
		for _, d := range c.deps {
			if f, ok := features[d]; ok && f.kind == "framework" {
				s += 1 << 30
			}
		}
		return s
	}
	sort.SliceStable(kept, func(i, j int) bool { return score(kept[i]) > score(kept[j]) })
	primary := kept[0]
	var deps []string
	for _, c := range kept {
		deps = append(deps, c.deps...)
	}
	arch := a.describe(dir, primary, deps, kept[1:])
	a.apps = append(a.apps, &found{App: App{Name: a.nameFor(dir, primary.name), Root: dir, Architecture: arch}, eco: primary.eco})
}

// describe writes the architecture sentence, e.g. "Python 3 Flask web
// application with SQLAlchemy on PostgreSQL and Redis".
func (a *analysis) describe(dir string, primary candidate, deps []string, others []candidate) string {
	var framework, what, frontend string
	var orms, stores []string
	add := func(list *[]string, v string) {
		for _, x := range *list {
			if x == v {
				return
			}
		}
		*list = append(*list, v)
	}
	for _, d := range primary.deps {
		f, ok := features[d]
		if !ok {
			continue
		}
		switch f.kind {
		case "framework":
			if framework == "" || (what == "application" && f.what != "application") {
				framework, what = f.label, f.what
			}
		case "cli":
			if framework == "" {
				framework, what = f.label, f.what
			}
		case "frontend":
			if frontend == "" {
				frontend = f.label
			}
		}
	}
	for _, d := range deps {
		f, ok := features[d]
		if !ok {
			continue
		}
		switch f.kind {
		case "orm":
			add(&orms, f.label)
		case "store":
			add(&stores, f.label)
		case "frontend":
			if frontend == "" {
				frontend = f.label
			}
		}
	}
	browser := primary.eco == "node" && what == "" && frontend != ""
	if !browser {
		for _, s := range a.composeStores(dir) {
			add(&stores, s)
		}
	}
	if framework == "Django" {
		add(&orms, "the Django ORM")
	}
	if framework == "Ruby on Rails" && len(orms) == 0 {
		add(&orms, "ActiveRecord")
	}
	if framework == "Laravel" && len(orms) == 0 {
		add(&orms, "Eloquent")
	}
	markers := a.markersIn(dir, false)
	if what == "" {
		switch {
		case primary.eco == "node" && frontend != "":
			framework, what = frontend, "browser single-page application"
			frontend = ""
		case primary.eco == "go" && markers&mGRPC != 0:
			what = "gRPC service"
		case primary.eco == "go" && markers&mHTTPServe != 0:
			what = "HTTP service"
		case primary.eco == "go" && primary.goMain:
			what = "application"
		case primary.eco == "go":
			what = "library"
		case primary.eco == "node":
			what = "Node.js application"
		case primary.eco == "rust" && primary.goMain:
			what = "application"
		case primary.eco == "rust":
			what = "library"
		case primary.eco == "python" && markers&mPythonMain == 0:
			what = "package"
		default:
			what = "application"
		}
	}
	if primary.eco == "node" && framework != "" && what != "browser single-page application" && !strings.Contains(what, "Node.js") {
		what = "Node.js " + what
	}
	parts := []string{primary.language}
	if framework != "" {
		parts = append(parts, framework)
	}
	parts = append(parts, what)
	s := strings.Join(parts, " ")
	if frontend != "" && framework != frontend {
		s += " with a " + frontend + " front end"
	}
	for _, o := range others {
		if o.eco == "node" && frontend == "" {
			for _, d := range o.deps {
				if f, ok := features[d]; ok && f.kind == "frontend" {
					s += " with a " + f.label + " front end"
					frontend = f.label
					break
				}
			}
		}
	}
	if len(orms) > 0 {
		s += " using " + andList(orms)
	}
	if len(stores) > 0 {
		s += " on " + andList(stores)
	}
	if a.has(dir, "Dockerfile") {
		s += ", packaged as a container image"
	}
	return s
}

func andList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

var composeImage = regexp.MustCompile(`(?m)^\s*image:\s*["']?([a-z0-9./_-]+)`)

func (a *analysis) composeStores(dir string) []string {
	var out []string
	for _, d := range []string{dir, "."} {
		for _, n := range []string{"docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml"} {
			if !a.has(d, n) {
				continue
			}
			for _, m := range composeImage.FindAllStringSubmatch(a.read(join(d, n)), -1) {
				img := m[1]
				if s, ok := composeStores[img]; ok {
					out = append(out, s)
				} else if s, ok := composeStores[path.Base(img)]; ok {
					out = append(out, s)
				}
			}
		}
		if dir == "." {
			break
		}
	}
	return out
}

// fallback describes repositories without a build manifest: loose source
// code, or container and infrastructure definitions only.
func (a *analysis) fallback() {
	code := a.codeIn(".")
	best, lines := "", 0
	for l, n := range code {
		if n > lines || (n == lines && l < best) {
			best, lines = l, n
		}
	}
	// Scripts, build files and infrastructure definitions are not an
	// application: a repository mostly made of them is described by its
	// infrastructure.
	if lines > 0 && best != "Shell" && best != "Makefile" && best != "HCL" && best != "Dockerfile" {
		a.apps = append(a.apps, &found{App: App{Name: a.repoName, Root: ".", Architecture: fmt.Sprintf("%s application without a build manifest", best)}})
		return
	}
	a.infrastructure()
}

func (a *analysis) infrastructure() {
	var tfDirs, k8sDirs, helmDirs, dockerDirs, composeDirs, cfnDirs []string
	for _, f := range a.all {
		if skipped(f.Path) {
			continue
		}
		d, base := dirOf(f.Path), path.Base(f.Path)
		switch {
		case strings.HasSuffix(base, ".tf"):
			tfDirs = append(tfDirs, d)
		case base == "Chart.yaml":
			helmDirs = append(helmDirs, d)
		case base == "Dockerfile" || strings.HasPrefix(base, "Dockerfile.") || strings.HasSuffix(base, ".Dockerfile"):
			dockerDirs = append(dockerDirs, d)
		case base == "docker-compose.yml" || base == "docker-compose.yaml" || base == "compose.yml" || base == "compose.yaml":
			composeDirs = append(composeDirs, d)
		}
		if fi := a.files[f.Path]; fi != nil {
			if fi.markers&mK8s != 0 {
				k8sDirs = append(k8sDirs, d)
			}
			if fi.markers&mCloudFormation != 0 {
				cfnDirs = append(cfnDirs, d)
			}
		}
	}
	add := func(dirs []string, name, arch string) {
		if len(dirs) == 0 {
			return
		}
		root := commonDir(dirs)
		a.apps = append(a.apps, &found{App: App{Name: a.nameFor(root, "") + "-" + name, Root: root, Architecture: arch}})
	}
	if len(tfDirs) > 0 {
		add(tfDirs, "terraform", "Terraform infrastructure-as-code"+a.terraformProviders(tfDirs))
	}
	if len(helmDirs) > 0 {
		add(helmDirs, "helm", "Helm chart deploying to Kubernetes")
		k8sDirs = nil
	}
	if len(k8sDirs) > 0 {
		add(k8sDirs, "kubernetes", "Kubernetes manifests"+a.k8sKinds(k8sDirs))
	}
	if len(cfnDirs) > 0 {
		add(cfnDirs, "cloudformation", "AWS CloudFormation infrastructure-as-code")
	}
	if len(composeDirs) > 0 {
		arch := "Docker Compose stack"
		if s := a.composeStores(composeDirs[0]); len(s) > 0 {
			arch += " with " + andList(s)
		}
		add(composeDirs, "compose", arch)
	}
	if len(dockerDirs) > 0 {
		arch := "Container image definition (Dockerfile)"
		for _, d := range dockerDirs {
			if m := fromImage.FindStringSubmatch(a.read(join(d, "Dockerfile"))); m != nil {
				arch = "Container image definition (Dockerfile based on " + m[1] + ")"
				break
			}
		}
		add(dockerDirs, "container", arch)
	}
}

var (
	fromImage  = regexp.MustCompile(`(?mi)^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)`)
	tfProvider = regexp.MustCompile(`(?m)^\s*(?:provider\s+"([a-z0-9_-]+)"|resource\s+"([a-z0-9]+)_)`)
	k8sKind    = regexp.MustCompile(`(?m)^kind:\s*([A-Za-z]+)`)
)

func (a *analysis) terraformProviders(dirs []string) string {
	set := map[string]bool{}
	for _, f := range a.all {
		if strings.HasSuffix(f.Path, ".tf") && !skipped(f.Path) {
			for _, m := range tfProvider.FindAllStringSubmatch(a.read(f.Path), -1) {
				p := m[1] + m[2]
				set[strings.ToUpper(p[:1])+p[1:]] = true
			}
		}
	}
	return listSuffix(" for ", set)
}

func (a *analysis) k8sKinds(dirs []string) string {
	set := map[string]bool{}
	for _, f := range a.files {
		if f.markers&mK8s != 0 {
			for _, m := range k8sKind.FindAllStringSubmatch(a.read(f.path), -1) {
				set[m[1]] = true
			}
		}
	}
	return listSuffix(" (", set) + map[bool]string{true: ")", false: ""}[len(set) > 0]
}

func listSuffix(prefix string, set map[string]bool) string {
	if len(set) == 0 {
		return ""
	}
	var xs []string
	for k := range set {
		if k == "Aws" {
			k = "AWS"
		} else if k == "Gcp" || k == "Google" {
			k = "Google Cloud"
		}
		xs = append(xs, k)
	}
	sort.Strings(xs)
	xs = dedupe(xs)
	return prefix + andList(xs)
}

func dedupe(xs []string) []string {
	var out []string
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func commonDir(dirs []string) string {
	c := dirs[0]
	for _, d := range dirs[1:] {
		for !under(d, c) {
			c = dirOf(c)
			if c == "." {
				return "."
			}
		}
	}
	return c
}

// ---- per-ecosystem manifests ----

var goRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]+/[^\s]+)\s+v`)
var goModule = regexp.MustCompile(`(?m)^module\s+(\S+)`)
var goVersion = regexp.MustCompile(`(?m)^go\s+(\d+\.\d+)`)

func (a *analysis) goCandidate(dir string) candidate {
	text := a.read(join(dir, "go.mod"))
	c := candidate{eco: "go", language: "Go", codeLangs: []string{"Go"}}
	if m := goModule.FindStringSubmatch(text); m != nil {
		c.name = path.Base(m[1])
	}
	if m := goVersion.FindStringSubmatch(text); m != nil {
		c.language = "Go " + m[1]
	}
	for _, m := range goRequire.FindAllStringSubmatch(text, -1) {
		dep := strings.ToLower(m[1])
		c.deps = append(c.deps, dep)
		if strings.HasPrefix(dep, "go.mongodb.org/mongo-driver") {
			c.deps = append(c.deps, "go.mongodb.org/mongo-driver")
		}
		if strings.HasPrefix(dep, "github.com/aws/aws-sdk-go") {
			c.deps = append(c.deps, "github.com/aws/aws-sdk-go-v2")
		}
	}
	c.goMain = a.markersIn(dir, false)&mGoMain != 0
	return c
}

type packageJSON struct {
	Name            string            `json:"name"`
	Dependencies    map[string]string `json:"dependencies"`
	DevDependencies map[string]string `json:"devDependencies"`
	Workspaces      json.RawMessage   `json:"workspaces"`
	Bin             json.RawMessage   `json:"bin"`
}

func (a *analysis) nodeCandidate(dir string) candidate {
	var p packageJSON
	_ = json.Unmarshal([]byte(a.read(join(dir, "package.json"))), &p)
	c := candidate{eco: "node", name: strings.TrimPrefix(p.Name, "@"), codeLangs: []string{"JavaScript", "TypeScript", "TSX", "JSX", "Vue", "Svelte"}}
	if i := strings.LastIndex(c.name, "/"); i >= 0 {
		c.name = c.name[i+1:]
	}
	for d := range p.Dependencies {
		c.deps = append(c.deps, strings.ToLower(d))
	}
	sort.Strings(c.deps)
	_, ts := p.DevDependencies["typescript"]
	if _, ok := p.Dependencies["typescript"]; ok || a.has(dir, "tsconfig.json") {
		ts = true
	}
	c.language = "JavaScript"
	if ts {
		c.language = "TypeScript"
	}
	hasFramework := false
	for _, d := range c.deps {
		if f, ok := features[d]; ok && (f.kind == "framework" || f.kind == "frontend") {
			hasFramework = true
		}
	}
	c.aggregator = len(p.Workspaces) > 0 && !hasFramework
	return c
}

var xmlTag = func(tag string) *regexp.Regexp {
	return regexp.MustCompile(`<` + tag + `>\s*([^<\s]+)\s*</` + tag + `>`)
}

var (
	pomArtifact  = xmlTag("artifactId")
	pomPackaging = xmlTag("packaging")
	pomJava      = regexp.MustCompile(`<(?:java\.version|maven\.compiler\.source|maven\.compiler\.release|release)>\s*([0-9.]+)\s*<`)
	gradleDep    = regexp.MustCompile(`["']([a-zA-Z0-9._-]+):([a-zA-Z0-9._-]+)(?::[^"']*)?["']`)
	gradleJava   = regexp.MustCompile(`(?:JavaVersion\.VERSION_|languageVersion\.set\(JavaLanguageVersion\.of\(|jvmToolchain\()(\d+)`)
)

func (a *analysis) mavenCandidate(dir string) candidate {
	text := a.read(join(dir, "pom.xml"))
	c := candidate{eco: "java", codeLangs: []string{"Java", "Kotlin", "Scala", "Groovy"}}
	// The project's own artifactId follows its parent block.
	body := text
	if i := strings.Index(body, "</parent>"); i >= 0 {
		body = body[i:]
	}
	if m := pomArtifact.FindStringSubmatch(body); m != nil {
		c.name = m[1]
	}
	for _, m := range pomArtifact.FindAllStringSubmatch(text, -1) {
		c.deps = append(c.deps, strings.ToLower(m[1]))
	}
	if m := pomPackaging.FindStringSubmatch(body); m != nil && m[1] == "pom" {
		c.aggregator = true
	}
	c.language = a.jvmLanguage(dir, pomJava.FindStringSubmatch(text))
	return c
}

func (a *analysis) gradleCandidate(dir, base string) candidate {
	text := a.read(join(dir, base))
	c := candidate{eco: "java", codeLangs: []string{"Java", "Kotlin", "Scala", "Groovy"}}
	for _, m := range gradleDep.FindAllStringSubmatch(text, -1) {
		c.deps = append(c.deps, strings.ToLower(m[2]))
	}
	if strings.Contains(text, "org.springframework.boot") {
		c.deps = append(c.deps, "spring-boot-starter")
	}
	for _, s := range []string{"settings.gradle", "settings.gradle.kts"} {
		if a.has(dir, s) {
			st := a.read(join(dir, s))
			if m := regexp.MustCompile(`rootProject\.name\s*=\s*["']([^"']+)`).FindStringSubmatch(st); m != nil {
				c.name = m[1]
			}
			if strings.Contains(st, "include") && !a.hasDirPrefix(join(dir, "src")) {
				c.aggregator = true
			}
		}
	}
	c.language = a.jvmLanguage(dir, gradleJava.FindStringSubmatch(text))
	return c
}

func (a *analysis) hasDirPrefix(p string) bool {
	for d := range a.byDir {
		if under(d, p) {
			return true
		}
	}
	return false
}

func (a *analysis) jvmLanguage(dir string, version []string) string {
	code := a.codeIn(dir)
	lang := "Java"
	if code["Kotlin"] > code["Java"] {
		lang = "Kotlin"
	}
	if lang == "Java" && version != nil {
		v := strings.TrimPrefix(version[1], "1.")
		return "Java " + v
	}
	return lang
}

var (
	pyReqLine = regexp.MustCompile(`(?m)^\s*([A-Za-z0-9][A-Za-z0-9._-]*)`)
	pyQuoted  = regexp.MustCompile(`["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;]|["'])`)
	pyTOMLKey = regexp.MustCompile(`(?m)^([A-Za-z0-9][A-Za-z0-9._-]*)\s*=`)
	pyName    = regexp.MustCompile(`(?m)^name\s*=\s*["']([^"']+)`)
	setupName = regexp.MustCompile(`name\s*=\s*["']([^"']+)`)
	py2       = regexp.MustCompile(`python_requires\s*=\s*["'][^"']*2\.7|python_version\s*=\s*["']2`)
)

func (a *analysis) pythonCandidate(dir string) (candidate, bool) {
	c := candidate{eco: "python", language: "Python 3", codeLangs: []string{"Python"}}
	ok := false
	for _, n := range []string{"requirements.txt", "requirements.in", "pyproject.toml", "setup.py", "setup.cfg", "Pipfile"} {
		if !a.has(dir, n) {
			continue
		}
		ok = true
		text := a.read(join(dir, n))
		var deps [][]string
		switch n {
		case "requirements.txt", "requirements.in":
			deps = pyReqLine.FindAllStringSubmatch(text, -1)
		case "Pipfile":
			deps = pyTOMLKey.FindAllStringSubmatch(text, -1)
		case "pyproject.toml":
			deps = append(pyQuoted.FindAllStringSubmatch(text, -1), pyTOMLKey.FindAllStringSubmatch(text, -1)...)
			if m := pyName.FindStringSubmatch(text); m != nil && c.name == "" {
				c.name = m[1]
			}
		default:
			deps = pyQuoted.FindAllStringSubmatch(text, -1)
			if m := setupName.FindStringSubmatch(text); m != nil && c.name == "" {
				c.name = m[1]
			}
		}
		for _, m := range deps {
			c.deps = append(c.deps, strings.ToLower(strings.ReplaceAll(m[1], "_", "-")))
		}
		if py2.MatchString(text) {
			c.language = "Python 2"
		}
	}
	if !ok && a.has(dir, "manage.py") {
		ok = true
		c.deps = append(c.deps, "django")
	}
	return c, ok
}

var gemLine = regexp.MustCompile(`(?m)^\s*gem\s+["']([^"']+)["']`)

func (a *analysis) rubyCandidate(dir string) candidate {
	c := candidate{eco: "ruby", language: "Ruby", codeLangs: []string{"Ruby"}}
	for _, m := range gemLine.FindAllStringSubmatch(a.read(join(dir, "Gemfile")), -1) {
		c.deps = append(c.deps, strings.ToLower(m[1]))
	}
	for _, d := range c.deps {
		switch d {
		case "pg":
			c.deps = append(c.deps, "postgresql")
		case "mysql2":
			c.deps = append(c.deps, "mysql-connector-j")
		case "sqlite3", "redis":
		}
	}
	return c
}

type composerJSON struct {
	Name    string            `json:"name"`
	Require map[string]string `json:"require"`
}

func (a *analysis) phpCandidate(dir string) candidate {
	var p composerJSON
	_ = json.Unmarshal([]byte(a.read(join(dir, "composer.json"))), &p)
	c := candidate{eco: "php", language: "PHP", codeLangs: []string{"PHP", "Hack"}}
	if p.Name != "" {
		c.name = path.Base(p.Name)
	}
	for d := range p.Require {
		d = strings.ToLower(d)
		c.deps = append(c.deps, d)
		if strings.HasPrefix(d, "symfony/") && d != "symfony/framework-bundle" {
			c.deps = append(c.deps, "symfony/framework-bundle")
		}
		if d == "ext-pdo_pgsql" {
			c.deps = append(c.deps, "postgresql")
		}
		if d == "ext-pdo_mysql" || d == "ext-mysqli" {
			c.deps = append(c.deps, "mysql2")
		}
	}
	sort.Strings(c.deps)
	return c
}

var (
	csprojSDK = regexp.MustCompile(`<Project\s+Sdk="([^"]+)"`)
	csprojPkg = regexp.MustCompile(`<PackageReference\s+Include="([^"]+)"`)
	csprojTFM = regexp.MustCompile(`<TargetFramework>net(\d+\.\d+)<`)
)

func (a *analysis) dotnetCandidate(dir, base string) candidate {
	text := a.read(join(dir, base))
	c := candidate{eco: "dotnet", language: "C#", name: strings.TrimSuffix(base, ".csproj"), codeLangs: []string{"C#", "F#", "Visual Basic .NET"}}
	if m := csprojSDK.FindStringSubmatch(text); m != nil {
		c.deps = append(c.deps, strings.ToLower(m[1]))
	}
	for _, m := range csprojPkg.FindAllStringSubmatch(text, -1) {
		c.deps = append(c.deps, strings.ToLower(m[1]))
	}
	if m := csprojTFM.FindStringSubmatch(text); m != nil {
		c.language = "C# .NET " + m[1]
	}
	return c
}

var (
	cargoSection = regexp.MustCompile(`(?m)^\[([^\]]+)\]`)
	cargoName    = regexp.MustCompile(`(?m)^name\s*=\s*"([^"]+)"`)
)

func (a *analysis) rustCandidate(dir string) candidate {
	text := a.read(join(dir, "Cargo.toml"))
	c := candidate{eco: "rust", language: "Rust", codeLangs: []string{"Rust"}}
	sections := cargoSection.FindAllStringSubmatchIndex(text, -1)
	hasPackage := false
	for i, s := range sections {
		name := text[s[2]:s[3]]
		end := len(text)
		if i+1 < len(sections) {
			end = sections[i+1][0]
		}
		body := text[s[1]:end]
		switch {
		case name == "package":
			hasPackage = true
			if m := cargoName.FindStringSubmatch(body); m != nil {
				c.name = m[1]
			}
		case strings.HasSuffix(name, "dependencies"):
			for _, m := range pyTOMLKey.FindAllStringSubmatch(body, -1) {
				c.deps = append(c.deps, strings.ToLower(m[1]))
			}
			if strings.Contains(body, `"postgres"`) {
				c.deps = append(c.deps, "tokio-postgres")
			}
			if strings.Contains(body, "mongodb") {
				c.deps = append(c.deps, "mongodb-rust")
			}
		case strings.HasPrefix(name, "dependencies."):
			c.deps = append(c.deps, strings.ToLower(strings.TrimPrefix(name, "dependencies.")))
		}
	}
	c.aggregator = !hasPackage && strings.Contains(text, "[workspace]")
	c.goMain = a.has(join(dir, "src"), "main.rs") || a.hasDirPrefix(join(dir, "src/bin"))
	return c
}

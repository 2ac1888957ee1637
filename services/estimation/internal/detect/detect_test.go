package detect

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

type wantApp struct{ name, root, arch string }

func TestAnalyzeFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		repo string
		want []wantApp
	}{
		{"go-gin", []wantApp{{"orders", ".", "Go 1.22 Gin web service using GORM on PostgreSQL"}}},
		{"python-flask", []wantApp{{"python-flask", ".", "Python 3 Flask web application using SQLAlchemy on PostgreSQL"}}},
		{"node-express", []wantApp{{"billing-api", ".", "JavaScript Express Node.js web server on Redis and PostgreSQL"}}},
		{"ts-react", []wantApp{{"dashboard", ".", "TypeScript React browser single-page application"}}},
		{"java-maven", []wantApp{{"inventory-service", ".", "Java 17 Spring Boot web application using Spring Data JPA (Hibernate) on PostgreSQL"}}},
		{"kotlin-gradle", []wantApp{{"notifier", ".", "Kotlin Ktor web service on PostgreSQL"}}},
		{"ruby-rails", []wantApp{{"ruby-rails", ".", "Ruby Ruby on Rails web application using ActiveRecord on PostgreSQL and Redis"}}},
		{"php-laravel", []wantApp{{"portal", ".", "PHP Laravel web application using Eloquent on MySQL"}}},
		{"csharp-aspnet", []wantApp{{"Payments.Api", ".", "C# .NET 8.0 ASP.NET Core web application using Entity Framework Core on PostgreSQL"}}},
		{"rust-axum", []wantApp{{"ledger", ".", "Rust Axum web service using SQLx on PostgreSQL"}}},
		{"iac-only", []wantApp{
			{"iac-only-terraform", ".", "Terraform infrastructure-as-code for AWS"},
			{"k8s-kubernetes", "k8s", "Kubernetes manifests (Deployment)"},
			{"iac-only-container", ".", "Container image definition (Dockerfile based on nginx:1.25-alpine)"},
		}},
		{"monorepo", []wantApp{
			{"api", "services/api", "Go 1.22 chi web service on PostgreSQL and Redis, packaged as a container image"},
			{"web", "services/web", "JavaScript Vue browser single-page application"},
			{"worker", "services/worker", "Python 3 Celery background worker on Redis and PostgreSQL"},
		}},
		{"docs-only", nil},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			t.Parallel()
			src, err := NewDirSource(filepath.Join("testdata", tt.repo))
			require.NoError(t, err)
			res := Analyze(src, tt.repo)
			var got []wantApp
			total := 0
			for _, a := range res.Apps {
				got = append(got, wantApp{a.Name, a.Root, a.Architecture})
				require.GreaterOrEqual(t, a.Credits, 1, a.Name)
				total += a.Credits
			}
			require.ElementsMatch(t, tt.want, got)
			require.Equal(t, total, res.Credits)
			if len(tt.want) == 0 {
				require.Zero(t, res.Credits)
			}
		})
	}
}

func TestCredits(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1, Credits(0, 0))
	require.Equal(t, 1, Credits(4999, 249))
	require.Equal(t, 2, Credits(5000, 1))
	require.Equal(t, 5, Credits(12000, 500))
}

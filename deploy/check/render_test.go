package check

import (
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/vulnscan/vulnscan/pkg/topology"
)

// kustomizeDir is the root of the kustomize tree, relative to this package.
const kustomizeDir = "../kustomize"

// processes are the long-running vulnscan processes, one Deployment each.
var processes = topology.Processes

// rendered is one kustomization, rendered and decoded into API types.
type rendered struct {
	name            string
	deployments     map[string]*appsv1.Deployment
	statefulSets    map[string]*appsv1.StatefulSet
	jobs            map[string]*batchv1.Job
	services        map[string]*corev1.Service
	serviceAccounts map[string]*corev1.ServiceAccount
	configMaps      map[string]*corev1.ConfigMap
	pvcs            map[string]*corev1.PersistentVolumeClaim
	hpas            map[string]*autoscalingv2.HorizontalPodAutoscaler
	pdbs            map[string]*policyv1.PodDisruptionBudget
	policies        map[string]*networkingv1.NetworkPolicy
	namespaces      map[string]*corev1.Namespace
	secrets         []string
}

// podTemplate is a workload's pod template with the workload's name.
type podTemplate struct {
	kind, name string
	spec       *corev1.PodSpec
	labels     map[string]string
}

func (r *rendered) podTemplates() []podTemplate {
	var out []podTemplate
	for _, name := range sortedKeys(r.deployments) {
		d := r.deployments[name]
		out = append(out, podTemplate{"Deployment", name, &d.Spec.Template.Spec, d.Spec.Template.Labels})
	}
	for _, name := range sortedKeys(r.statefulSets) {
		s := r.statefulSets[name]
		out = append(out, podTemplate{"StatefulSet", name, &s.Spec.Template.Spec, s.Spec.Template.Labels})
	}
	for _, name := range sortedKeys(r.jobs) {
		j := r.jobs[name]
		out = append(out, podTemplate{"Job", name, &j.Spec.Template.Spec, j.Spec.Template.Labels})
	}
	return out
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, autoscalingv2.AddToScheme,
		policyv1.AddToScheme, networkingv1.AddToScheme, batchv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// strict decodes YAML into the registered API types and fails on unknown or
// duplicate fields and on kinds outside the scheme.
var strict = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
	kjson.SerializerOptions{Yaml: true, Strict: true})

var (
	renderMu    sync.Mutex
	renderCache = map[string]*rendered{}
)

// render runs kustomize on dir (relative to kustomizeDir) the way
// `kustomize build` does and decodes every object strictly.
func render(t *testing.T, dir string) *rendered {
	t.Helper()
	renderMu.Lock()
	defer renderMu.Unlock()
	if r, ok := renderCache[dir]; ok {
		return r
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), filepath.Join(kustomizeDir, dir))
	require.NoError(t, err, "kustomize build %s", dir)

	r := &rendered{
		name:            dir,
		deployments:     map[string]*appsv1.Deployment{},
		statefulSets:    map[string]*appsv1.StatefulSet{},
		jobs:            map[string]*batchv1.Job{},
		services:        map[string]*corev1.Service{},
		serviceAccounts: map[string]*corev1.ServiceAccount{},
		configMaps:      map[string]*corev1.ConfigMap{},
		pvcs:            map[string]*corev1.PersistentVolumeClaim{},
		hpas:            map[string]*autoscalingv2.HorizontalPodAutoscaler{},
		pdbs:            map[string]*policyv1.PodDisruptionBudget{},
		policies:        map[string]*networkingv1.NetworkPolicy{},
		namespaces:      map[string]*corev1.Namespace{},
	}
	for _, res := range resMap.Resources() {
		y, err := res.AsYAML()
		require.NoError(t, err)
		obj, gvk, err := strict.Decode(y, nil, nil)
		require.NoError(t, err, "%s: strict decode of %s %s", dir, res.GetKind(), res.GetName())
		name := res.GetName()
		var dup bool
		switch o := obj.(type) {
		case *appsv1.Deployment:
			_, dup = r.deployments[name]
			r.deployments[name] = o
		case *appsv1.StatefulSet:
			_, dup = r.statefulSets[name]
			r.statefulSets[name] = o
		case *batchv1.Job:
			_, dup = r.jobs[name]
			r.jobs[name] = o
		case *corev1.Service:
			_, dup = r.services[name]
			r.services[name] = o
		case *corev1.ServiceAccount:
			_, dup = r.serviceAccounts[name]
			r.serviceAccounts[name] = o
		case *corev1.ConfigMap:
			_, dup = r.configMaps[name]
			r.configMaps[name] = o
		case *corev1.PersistentVolumeClaim:
			_, dup = r.pvcs[name]
			r.pvcs[name] = o
		case *autoscalingv2.HorizontalPodAutoscaler:
			_, dup = r.hpas[name]
			r.hpas[name] = o
		case *policyv1.PodDisruptionBudget:
			_, dup = r.pdbs[name]
			r.pdbs[name] = o
		case *networkingv1.NetworkPolicy:
			_, dup = r.policies[name]
			r.policies[name] = o
		case *corev1.Namespace:
			_, dup = r.namespaces[name]
			r.namespaces[name] = o
		case *corev1.Secret:
			r.secrets = append(r.secrets, name)
		default:
			t.Fatalf("%s: %s %s: kind %s is not expected in the deployment", dir, gvk, name, gvk.Kind)
		}
		require.False(t, dup, "%s: duplicate %s %s", dir, gvk.Kind, name)
	}
	renderCache[dir] = r
	return r
}

// overlays lists the directories under kustomize/overlays.
func overlays(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(kustomizeDir, "overlays"))
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, filepath.Join("overlays", e.Name()))
		}
	}
	require.Contains(t, out, "overlays/dev")
	require.Contains(t, out, "overlays/prod")
	return out
}

// everyOverlay runs fn as a parallel subtest for each overlay.
func everyOverlay(t *testing.T, fn func(t *testing.T, r *rendered)) {
	t.Helper()
	for _, dir := range overlays(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			fn(t, render(t, dir))
		})
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

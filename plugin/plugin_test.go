package plugin

import (
	"slices"
	"strings"
	"testing"

	"github.com/golangci/plugin-module-register/register"

	"github.com/natssend/natssend/analyzer"
)

// yamlSettings returns settings shaped as golangci-lint passes them: the
// configuration is read by viper, so lists arrive as []any.
func yamlSettings() map[string]any {
	return map[string]any{
		"shim-packages": []any{"example.com/acme/natsx"},
		"retry-helpers": []any{"example.com/acme/retry.Do", "example.com/acme/retry.Forever"},
		"categories":    []any{"rawsend", "retry"},
		"include-tests": false,
		"audit":         true,
		"claim-checks":  true,
	}
}

func TestRegistered(t *testing.T) {
	newPlugin, err := register.GetPlugin(Name)
	if err != nil {
		t.Fatalf("GetPlugin(%q): %v", Name, err)
	}
	p, err := newPlugin(nil)
	if err != nil {
		t.Fatalf("new plugin with no settings: %v", err)
	}
	if got := p.GetLoadMode(); got != register.LoadModeTypesInfo {
		t.Errorf("GetLoadMode() = %q, want %q", got, register.LoadModeTypesInfo)
	}
	as, err := p.BuildAnalyzers()
	if err != nil {
		t.Fatalf("BuildAnalyzers: %v", err)
	}
	if len(as) != 1 || as[0] == nil {
		t.Fatalf("BuildAnalyzers returned %v, want one analyzer", as)
	}
	if as[0].Name != "natssend" {
		t.Errorf("analyzer name = %q, want %q", as[0].Name, "natssend")
	}
}

func TestDefaults(t *testing.T) {
	want := analyzer.DefaultConfig()
	want.SkipTests = false // include-tests defaults to true
	for name, raw := range map[string]any{
		"nil":         nil,
		"empty map":   map[string]any{},
		"empty lists": map[string]any{"shim-packages": []any{}, "retry-helpers": []any{}, "categories": []any{}},
		"null values": map[string]any{"shim-packages": nil, "retry-helpers": nil, "categories": nil, "include-tests": nil},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := DecodeSettings(raw)
			if err != nil {
				t.Fatalf("DecodeSettings: %v", err)
			}
			assertConfig(t, s.Config(), want)
			if _, err := New(raw); err != nil {
				t.Fatalf("New: %v", err)
			}
		})
	}
}

func TestDecodeSettings(t *testing.T) {
	s, err := DecodeSettings(yamlSettings())
	if err != nil {
		t.Fatalf("DecodeSettings: %v", err)
	}
	want := analyzer.DefaultConfig()
	want.ShimPackages = []string{"example.com/acme/natsx"}
	want.RetryHelpers = []string{"example.com/acme/retry.Do", "example.com/acme/retry.Forever"}
	want.Categories = []string{"rawsend", "retry"}
	want.SkipTests = true
	want.Audit = true
	want.ClaimChecks = true
	assertConfig(t, s.Config(), want)

	p, err := New(yamlSettings())
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	as, err := p.BuildAnalyzers()
	if err != nil || len(as) != 1 || as[0].Name != "natssend" {
		t.Fatalf("BuildAnalyzers = %v, %v; want the natssend analyzer", as, err)
	}
}

func TestIncludeTestsTrue(t *testing.T) {
	s, err := DecodeSettings(map[string]any{"include-tests": true})
	if err != nil {
		t.Fatalf("DecodeSettings: %v", err)
	}
	if s.Config().SkipTests {
		t.Error("include-tests: true gave SkipTests = true")
	}
}

func TestConfigDoesNotAlias(t *testing.T) {
	s, err := DecodeSettings(yamlSettings())
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Config()
	cfg.ShimPackages[0] = "changed"
	if s.ShimPackages[0] == "changed" {
		t.Error("Config shares its ShimPackages slice with Settings")
	}
}

func TestUnknownSetting(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  map[string]any
		want []string
	}{
		"typo":           {map[string]any{"shim-package": []any{"x"}}, []string{`unknown setting "shim-package"`, "shim-packages"}},
		"camel case":     {map[string]any{"skipTests": true}, []string{`"skipTests"`}},
		"case differs":   {map[string]any{"Categories": []any{"retry"}}, []string{`"Categories"`}},
		"several":        {map[string]any{"zeta": 1, "alpha": 2, "categories": []any{"retry"}}, []string{`unknown settings "alpha", "zeta"`}},
		"old skip-tests": {map[string]any{"skip-tests": true}, []string{`"skip-tests"`, "include-tests"}},
	} {
		t.Run(name, func(t *testing.T) {
			for _, call := range []func(any) error{
				func(raw any) error { _, err := DecodeSettings(raw); return err },
				func(raw any) error { _, err := New(raw); return err },
			} {
				err := call(tc.raw)
				if err == nil {
					t.Fatalf("settings %v accepted, want an error", tc.raw)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
			}
		})
	}
}

func TestWrongType(t *testing.T) {
	for name, tc := range map[string]struct {
		raw  any
		want string
	}{
		"categories as string":  {map[string]any{"categories": "rawsend"}, "categories"},
		"include-tests as list": {map[string]any{"include-tests": []any{true}}, "include-tests"},
		"shim-packages numbers": {map[string]any{"shim-packages": []any{1, 2}}, "shim-packages"},
		"settings not a map":    {[]any{"rawsend"}, "settings"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.raw)
			if err == nil {
				t.Fatalf("settings %v accepted, want an error", tc.raw)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
}

func TestBadCategory(t *testing.T) {
	_, err := New(map[string]any{"categories": []any{"rawsend", "retries"}})
	if err == nil {
		t.Fatal("unknown category accepted, want an error")
	}
	if !strings.Contains(err.Error(), `"retries"`) {
		t.Errorf("error %q does not name the unknown category %q", err, "retries")
	}
	if strings.Count(err.Error(), "natssend:") != 1 {
		t.Errorf("error %q should say natssend: once", err)
	}
}

func assertConfig(t *testing.T, got, want analyzer.Config) {
	t.Helper()
	if !slices.Equal(got.ShimPackages, want.ShimPackages) {
		t.Errorf("ShimPackages = %q, want %q", got.ShimPackages, want.ShimPackages)
	}
	if !slices.Equal(got.RetryHelpers, want.RetryHelpers) {
		t.Errorf("RetryHelpers = %q, want %q", got.RetryHelpers, want.RetryHelpers)
	}
	if !slices.Equal(got.Categories, want.Categories) {
		t.Errorf("Categories = %q, want %q", got.Categories, want.Categories)
	}
	if got.SkipTests != want.SkipTests {
		t.Errorf("SkipTests = %v, want %v", got.SkipTests, want.SkipTests)
	}
	if got.Audit != want.Audit {
		t.Errorf("Audit = %v, want %v", got.Audit, want.Audit)
	}
	if got.ClaimChecks != want.ClaimChecks {
		t.Errorf("ClaimChecks = %v, want %v", got.ClaimChecks, want.ClaimChecks)
	}
}

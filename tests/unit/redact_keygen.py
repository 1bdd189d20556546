"""Keys drawn at random in providers' documented formats, written in many syntaxes (issue 34).

Shared by tests/unit/test_redact_properties.py (hypothesis, fixed seed) and bench/redact_random.py (random
seed, >= 100,000 draws). Every format is (name, parts): each part is a literal or (alphabet, min, max). The
body is uniform random in the documented alphabet: a draw may hold "YoUr", "HeRe", "xXxX" or no digit at all,
and it is still a key someone holds.
"""

from __future__ import annotations

import random

UP, LOW, DIG = "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"
AN = UP + LOW + DIG
ALPHA = UP + LOW
B64U = AN + "_-"
B64 = AN + "+/"
HEX = "0123456789abcdef"
B32 = UP + "234567"

# Formats as the providers document them (prefix, alphabet, length); several providers have two.
FORMATS: tuple[tuple[str, tuple], ...] = (
    ("openai-legacy", ("sk-", (AN, 48, 48))),
    ("openai-project", ("sk-proj-", (B64U, 74, 74), "T3BlbkFJ", (B64U, 74, 74))),
    ("openai-service", ("sk-svcacct-", (B64U, 40, 120))),
    ("openai-admin", ("sk-admin-", (B64U, 40, 120))),
    ("anthropic-api", ("sk-ant-api03-", (B64U, 93, 93), "AA")),
    ("anthropic-admin", ("sk-ant-admin01-", (B64U, 93, 93), "AA")),
    ("openrouter", ("sk-or-v1-", (HEX, 64, 64))),
    ("github-classic", ("ghp_", (AN, 36, 36))),
    ("github-oauth", ("gho_", (AN, 36, 36))),
    ("github-app", ("ghs_", (AN, 36, 36))),
    ("github-fine-grained", ("github_pat_", (AN, 22, 22), "_", (AN, 59, 59))),
    ("gitlab-pat", ("glpat-", (B64U, 20, 20))),
    ("gitlab-pat-routable", ("glpat-", (B64U, 27, 40), ".01.", (AN, 9, 9))),
    ("aws-access-key", ("AKIA", (B32, 16, 16))),
    ("aws-session-key", ("ASIA", (B32, 16, 16))),
    ("stripe-secret", ("sk_live_", (AN, 24, 99))),
    ("stripe-restricted", ("rk_live_", (AN, 24, 99))),
    ("stripe-webhook", ("whsec_", (AN, 32, 32))),
    ("huggingface", ("hf_", (ALPHA, 34, 34))),
    ("slack-bot", ("xoxb-", (DIG, 10, 13), "-", (DIG, 10, 13), "-", (AN, 24, 24))),
    ("slack-user", ("xoxp-", (DIG, 10, 13), "-", (DIG, 10, 13), "-", (DIG, 10, 13), "-", (HEX, 32, 32))),
    ("slack-app", ("xapp-1-A", (UP + DIG, 10, 10), "-", (DIG, 13, 13), "-", (HEX, 64, 64))),
    ("google-api", ("AIza", (B64U, 35, 35))),
    ("google-oauth-secret", ("GOCSPX-", (B64U, 28, 28))),
    ("npm", ("npm_", (AN, 36, 36))),
    ("sendgrid", ("SG.", (B64U, 22, 22), ".", (B64U, 43, 43))),
    ("groq", ("gsk_", (AN, 52, 52))),
    ("replicate", ("r8_", (AN, 37, 37))),
    ("pypi", ("pypi-AgEIcHlwaS5vcmc", (B64U, 70, 180))),
    ("shopify", ("shpat_", (HEX, 32, 32))),
    ("digitalocean", ("dop_v1_", (HEX, 64, 64))),
    ("perplexity", ("pplx-", (AN, 48, 48))),
    ("xai", ("xai-", (AN, 80, 80))),
    ("linear", ("lin_api_", (AN, 40, 40))),
    ("twilio-api-key", ("SK", (HEX, 32, 32))),
    ("mapbox-secret", ("sk.eyJ1Ijoi", (B64U, 40, 80), ".", (B64U, 22, 22))),
    ("circleci-personal", ("CCIPAT_", (AN, 22, 22), "_", (HEX, 40, 40))),
    ("rootly", ("rootly_", (HEX, 64, 64))),
    ("bitbucket-dc", ("BBDC-", (B64U, 44, 44))),
    ("bitbucket-app", ("ATBB", (AN, 32, 32))),
    ("hashicorp-vault", ("hvs.", (B64U, 90, 120))),
    ("doppler", ("dp.pt.", (AN, 43, 43))),
    ("postman", ("PMAK-", (HEX, 24, 24), "-", (HEX, 34, 34))),
    ("databricks", ("dapi", (HEX, 32, 32))),
)

# Where a key is written: {k} is the key. Chat prose (English, Chinese), config and code in many languages,
# markup, logs, URLs, command lines, and the same key twice.
SYNTAXES: tuple[str, ...] = (
    "here is the key: {k}",
    "I rotated it, the new one is {k}.",
    "用这个：{k}，别外传。",
    "密钥（{k}）已经更新",
    "{k}",
    "KEY={k}",
    'export SERVICE_TOKEN="{k}"',
    "token: {k}",
    "  credential: '{k}'",
    '{{"apiKey": "{k}", "region": "us-east-1"}}',
    "NAME token - '{k}'",
    "deploy key -> {k}",
    "auth := \"{k}\"",
    "'secret' => '{k}',",
    "<id>{k}</id>",
    "<key>\n  {k}\n</key>",
    '<add name="Service" value="{k}" />',
    '<div data-value="{k}"></div>',
    "[DEBUG] 2024-05-01 12:00:00 sending request with {k} to upstream",
    "2024-05-01T12:00:00Z level=debug msg=call id={k} status=200",
    "https://api.example.com/v1/items?key={k}&page=2",
    "curl -H 'Authorization: Bearer {k}' https://api.example.com/",
    'client = Client("{k}")',
    "const KEY = `{k}`;",
    "| prod | {k} | 2024-05-01 |",
    "user,{k},2024-05-01",
    "first {k} and again later: {k}",
    "`{k}`",
    "(see {k})",
    "the value {k}. Then restart.",
)


def body(rnd: random.Random, parts: tuple) -> str:
    out = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
        else:
            alphabet, lo, hi = p
            out.append("".join(rnd.choice(alphabet) for _ in range(rnd.randint(lo, hi))))
    return "".join(out)


def draw(rnd: random.Random, fmt: int | None = None, syntax: int | None = None) -> tuple[str, str, str, str]:
    """(format name, syntax, text, key): one key drawn in a format, written in a syntax."""
    name, parts = FORMATS[rnd.randrange(len(FORMATS)) if fmt is None else fmt]
    form = SYNTAXES[rnd.randrange(len(SYNTAXES)) if syntax is None else syntax]
    key = body(rnd, parts)
    return name, form, form.format(k=key), key


def in_clear(key: str, out: str, width: int = 12) -> bool:
    """Strict: any `width`-character piece of the key (the whole key if shorter) still in the output."""
    w = min(width, len(key))
    return any(key[i:i + w] in out for i in range(len(key) - w + 1))


_NAMES = ("password", "db_password", "API_KEY", "apiKey", "secret", "client_secret", "auth_token", "token",
          "access_key", "SECRET_KEY", "private_key", "credentials", "x-api-key", "passwd", "github_token",
          "refresh_token", "aws_secret_access_key", "slack_webhook", "SENDGRID_API_KEY", "pwd")
_VALUES = ("changeme", "<your-token>", "${API_KEY}", "xxxxxxxxxxxxxxxx", "your-api-key-here", "os.environ['KEY']",
           "None", "", "config.secret", "hunter2", "REPLACE_ME", "{{ secrets.TOKEN }}", "true", "3600")
_LINES = ('{n} = "{v}"', "{n}: {v}", "export {n}={v}", '"{n}": "{v}",', "<{n}>{v}</{n}>", "{n} := \"{v}\"",
          "  - name: {n}\n    value: {v}", "[DEBUG] auth ok {n}={v} user=alice", "--{n} {v}", "# the {n} is {v}",
          "set {n} to {v} before the run", "$config['{n}'] = '{v}';", "{n}={v}&page=2", "os.environ['{n}'] = '{v}'")


def keyword_corpus(size: int = 4 << 20, seed: int = 34) -> str:
    """Text dense in key words, as secret detectors' test files are: every line names a secret (password,
    token, api key, …) and holds a value in one of many syntaxes; a third of the values are keys drawn at
    random in a documented format, the rest placeholders, code and plain values."""
    rnd = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        name = rnd.choice(_NAMES)
        if rnd.random() < 0.35:
            value = body(rnd, rnd.choice(FORMATS)[1])
        else:
            value = rnd.choice(_VALUES)
        line = rnd.choice(_LINES).format(n=name, v=value)
        parts.append(line)
        total += len(line) + 1
    return "\n".join(parts)


_DETECTOR_TEST = '''package {pkg}

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/example/scanner/pkg/detectors"
	"github.com/example/scanner/pkg/engine/ahocorasick"
)

var (
	validPattern   = "{key}"
	validPattern2  = `{name}_secret := "{key2}"`
	invalidPattern = "{bad}"
	keyword        = "{pkg}"
)

func Test{Pkg}_Pattern(t *testing.T) {{
	d := Scanner{{}}
	ahoCorasickCore := ahocorasick.NewAhoCorasickCore([]detectors.Detector{{d}})

	tests := []struct {{
		name  string
		input string
		want  []string
	}}{{
		{{
			name:  "valid pattern - with keyword {pkg}",
			input: fmt.Sprintf("%s token = '%s'", keyword, validPattern),
			want:  []string{{validPattern}},
		}},
		{{
			name:  "valid pattern - key out of prefix range",
			input: fmt.Sprintf("%s token - '%s'\\n", keyword, validPattern),
			want:  []string{{validPattern}},
		}},
		{{
			name:  "valid pattern - log line",
			input: fmt.Sprintf("[DEBUG] 2024-01-01 connecting to %s api with secret=%s", keyword, validPattern),
			want:  []string{{validPattern}},
		}},
		{{
			name: "valid pattern - xml",
			input: `<config>
	<id>{id}</id>
	<secret>{key}</secret>
	<password>{password}</password>
</config>`,
			want: []string{{"{key}"}},
		}},
		{{
			name:  "invalid pattern",
			input: fmt.Sprintf("%s key = '%s'", keyword, invalidPattern),
			want:  nil,
		}},
	}}

	for _, test := range tests {{
		t.Run(test.name, func(t *testing.T) {{
			matchedDetectors := ahoCorasickCore.FindDetectorMatches([]byte(test.input))
			if len(matchedDetectors) == 0 {{
				t.Errorf("keywords '%v' not matched by: %s", d.Keywords(), test.input)
				return
			}}

			results, err := d.FromData(context.Background(), false, []byte(test.input))
			if err != nil {{
				t.Errorf("error = %v", err)
				return
			}}

			if len(results) != len(test.want) {{
				if len(results) == 0 {{
					t.Errorf("did not receive result")
				}} else {{
					t.Errorf("expected %d results, only received %d", len(test.want), len(results))
				}}
				return
			}}

			actual := make(map[string]struct{{}}, len(results))
			for _, r := range results {{
				if len(r.RawV2) > 0 {{
					actual[string(r.RawV2)] = struct{{}}{{}}
				}} else {{
					actual[string(r.Raw)] = struct{{}}{{}}
				}}
			}}
			expected := make(map[string]struct{{}}, len(test.want))
			for _, v := range test.want {{
				expected[v] = struct{{}}{{}}
			}}

			if diff := cmp.Diff(expected, actual); diff != "" {{
				t.Errorf("%s diff: (-want +got)\\n%s", test.name, diff)
			}}
		}})
	}}
}}
'''


def detector_test_corpus(size: int = 4 << 20, seed: int = 34) -> str:
    """Text dense in key words as secret detectors' own test files are (Go pattern tests: a key, a second key
    in code, an invalid look-alike, then the key in sentences, a log line and XML), keys drawn at random."""
    rnd = random.Random(seed)
    parts: list[str] = []
    total = 0
    while total < size:
        name, fmt = rnd.choice(FORMATS)
        pkg = name.split("-")[0]
        key, key2 = body(rnd, fmt), body(rnd, rnd.choice(FORMATS)[1])
        doc = _DETECTOR_TEST.format(pkg=pkg, Pkg=pkg.title(), name=pkg, key=key, key2=key2,
                                    bad=key[:-3] + "?!#", id=body(rnd, ((HEX, 32, 32),)),
                                    password=body(rnd, ((AN, 12, 20),)))
        parts.append(doc)
        total += len(doc)
    return "\n".join(parts)

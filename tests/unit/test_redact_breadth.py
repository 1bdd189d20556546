"""Issue 24: redaction at the breadth of dedicated secret scanners (tests/unit/redact_scanner_cases.py, frozen
before tuning): the forms code and configs use, the ~270 token kinds scanners know, placeholders left alone,
ordinary look-alikes left alone, Kubernetes Secrets, and a form nobody listed still caught."""

from __future__ import annotations

import base64
import random
import string
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import redact_cases  # noqa: E402
import redact_scanner_cases as scanner  # noqa: E402
import redact_scanner_kinds as kinds  # noqa: E402

from memvault.redact.engine import redact  # noqa: E402

TUNE = scanner.breadth_positive_cases()
HELD = scanner.breadth_positive_cases(heldout=True)
NEG = scanner.breadth_negative_lines()


def _survives(secret: str, out: str, width: int = 16) -> bool:
    w = min(width, len(secret))
    return any(secret[i:i + w] in out for i in range(len(secret) - w + 1))


def test_table_has_the_breadth_the_issue_asks_for():
    assert len(kinds.KINDS) >= 200 and len({k.id for k in kinds.KINDS}) == len(kinds.KINDS)
    forms = {c.form for c in TUNE}
    for form in ("go-var", "go-backquote", "php-concat", "java-setproperty", "xml-multiline", "make-posix",
                 "make-immediate", "make-conditional", "k8s-secret", "azure-client-secret", "bare-en", "bare-zh"):
        assert form in forms, form
    assert len([f for f, _ in scanner.COMMON]) == 17
    assert {c.lang for c in TUNE} == {"en", "zh"}
    assert {f for f, _ in scanner.UNLISTED} <= {c.form for c in HELD}
    assert len(NEG) >= 400


@pytest.mark.parametrize("draw", ["tuning", "held-out"])
def test_strict_recall_at_least_99_percent(draw):
    cases = TUNE if draw == "tuning" else HELD
    missed = [c for c in cases if any(_survives(s, redact(c.text).text) for s in c.secrets)]
    # Known and kept: a mongodb+srv:// URI keeps its host (url-credentials redacts user:password@ only), while
    # the frozen table counts the whole URI as the secret -- 3 cases a draw.
    assert len(missed) <= len(cases) * 0.01, [(c.form, c.kind) for c in missed]
    assert all(c.kind == "mongodb-uri" for c in missed), [(c.form, c.kind) for c in missed]


@pytest.mark.parametrize("seed", [scanner.SEED, scanner.HELDOUT_SEED])
def test_placeholders_and_look_alikes_left_alone(seed):
    lines = scanner.breadth_negative_lines(seed)
    changed = [(g, ln) for g, ln in lines if redact(ln).text != ln]
    assert len(changed) <= len(lines) * 0.01, changed[:10]


@pytest.mark.parametrize("prefix,n", scanner.PLACEHOLDER_PREFIXES)
def test_documentation_shapes_of_every_provider_are_left_alone(prefix, n):
    for filler in ("x" * n, "X" * n, "0" * n, "<your-token>", "YOUR_API_KEY", "..."):
        for line in (f"export SERVICE_TOKEN={prefix}{filler}", f"例如：{prefix}{filler}"):
            assert redact(line).text == line


def test_the_rare_forms_keep_the_key_and_lose_the_value():
    v = "tij6r75khhbxd6682jpf03zb"
    for text, kept in (
            (f'var xToken string = "{v}"', 'var xToken string = "'),
            (f"xToken := `{v}`", "xToken := `"),
            (f'$apiKey = "";\n$apiKey .= "{v}";', "$apiKey .= \""),
            (f'System.setProperty("api.token", "{v}");', 'System.setProperty("api.token", "'),
            (f"<apiKey>\n    {v}\n</apiKey>", "<apiKey>\n    "),
            (f"API_TOKEN ::= {v}", "API_TOKEN ::= "), (f"API_TOKEN :::= {v}", "API_TOKEN :::= "),
            (f"API_TOKEN ?= {v}", "API_TOKEN ?= ")):
        out = redact(text).text
        assert v not in out and kept in out and "[REDACTED:" in out, out


def test_named_providers_scanners_know():
    rng = random.Random(24)
    an = string.ascii_letters + string.digits
    for token, rule in (
            ("ntn_" + kinds.r(rng, string.digits, 11) + kinds.r(rng, an, 35), "notion-token"),
            ("sgp_" + kinds.r(rng, "0123456789abcdef", 16) + "_" + kinds.r(rng, "0123456789abcdef", 40),
             "sourcegraph-token"),
            ("EAAC" + kinds.r(rng, an, 150), "facebook-token"),
            (kinds.azure_client_secret(rng), "azure-client-secret"),
            (base64.b64encode(kinds.jwt(rng).encode()).decode(), "jwt"),
            (f"https://acme.webhook.office.com/webhookb2/{kinds.uuid(rng)}@{kinds.uuid(rng)}/IncomingWebhook/"
             f"{kinds.r(rng, '0123456789abcdef', 32)}/{kinds.uuid(rng)}", "teams-webhook")):
        for text in (f"here: {token} ok", f"日志里有{token}，怎么办"):
            r = redact(text)
            assert token not in r.text and not _survives(token, r.text), (rule, r.text)
            assert rule in {f.rule for f in r.findings}, (rule, [f.rule for f in r.findings])


def test_kubernetes_secret_values_go_names_and_empty_values_stay():
    pw = base64.b64encode(b"Xk9-mP2-vL7q").decode()
    url = base64.b64encode(b"postgres://app:Q7v@db/app").decode()
    level = base64.b64encode(b"debug-verbose").decode()
    doc = (f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  password: {pw}\n"
           f"  DATABASE_URL: {url}\n  empty: \"\"\n---\nkind: ConfigMap\ndata:\n  LOG_LEVEL: {level}\n"
           f"  COPY: {pw}\n")
    out = redact(doc).text
    assert pw not in out and url not in out
    assert "  password: [REDACTED:" in out and "DATABASE_URL: [REDACTED:kubernetes-secret]" in out
    assert 'empty: ""' in out and f"LOG_LEVEL: {level}" in out  # a ConfigMap is no Secret
    assert "COPY: [REDACTED:" in out  # but a copy of the Secret's value goes (issue 34)


def test_idempotent_on_the_breadth_table():
    for c in TUNE[::7] + HELD[::11]:
        once = redact(c.text).text
        assert redact(once).text == once, c.text


# --------------------------------------------------------------------------- written after tuning

NOVEL = (  # forms that appear nowhere in the frozen table or the rules' docstrings; never tuned on
    "//registry.npmjs.org/:_authToken={v}",
    "[pypi]\nusername = __token__\npassword = {v}",
    "machine api.example.com login deploy password {v}",
    'Environment="WEBHOOK_SECRET={v}"',
    "spring.datasource.password: {v}",
    '{{"query": "mutation", "variables": {{"apiToken": "{v}"}}}}',
    "cat <<EOF > .env\nSTRIPE_SIGNING_SECRET={v}\nEOF",
    '<entry key="jwt.signing.key">{v}</entry>',
    "set -x; curl -H \"X-Access-Token: {v}\" https://api.example.com/ping",
    "secretKeyRef: {{}}\nAPP_MASTER_KEY: '{v}'",
    "hmac_secret <- \"{v}\"",
    "let refresh_token = String::from(\"{v}\");",
    "@Value(\"{v}\") private String licenseKey;",
    'ini_set("session.auth_secret", "{v}");',
    "bot.run(token='{v}')",
)


def test_forms_written_after_tuning():
    """First run, before any change for them: 33/45 (73 %): `<entry key="…">v</entry>`, R `<-`, `String::from("v")`
    and `@Value("v") … licenseKey` were missed; the first three were then generalised (value-before-key stays missed)."""
    rng = random.Random(2424)
    cases = []
    for t in NOVEL:
        for make in (lambda: kinds.r(rng, string.ascii_letters + string.digits, 32),
                     lambda: kinds.r(rng, "0123456789abcdef", 40), lambda: kinds.r(rng, kinds.B64URL, 43)):
            v = make()
            cases.append((t.format(v=v), v))
    missed = [t for t, v in cases if _survives(v, redact(t).text)]
    assert len(missed) <= len(cases) * 0.1, missed


def test_new_pathological_shapes_are_left_alone():
    size = 1 << 16
    for line in ("ntn_" * size, "a_b-" * size, "Q~" * size, "ZXlK" * size, "kind: Secret\ndata:\n" + "  k: a\n" * size,
                 'api_key="' * size, "<apiKey>\n" * size, "x.token .= " * size):
        r = redact(line)
        assert redact(r.text).text == r.text
    assert redact("API-" + "A" * size).text == "API-" + "A" * size
    assert redact_cases  # the older tables keep their own tests (test_redact.py)


def test_plain_negatives_mostly_unchanged():
    """Issue 34: texts that are not secret-shaped (code, URLs, config with placeholders, prose, markup, logs,
    templates) stay byte-identical, at least 95 % of them (the set was written before the rules were tuned)."""
    lines = redact_cases.plain_negatives()
    assert len(lines) >= 200
    changed = [(g, ln, redact(ln).text) for g, ln in lines if redact(ln).text != ln]
    assert len(changed) <= 0.05 * len(lines), changed

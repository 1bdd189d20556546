"""Token kinds that dedicated secret scanners know (issue 24), as value generators.

Facts (prefixes, lengths, alphabets) were read from the public rule lists of gitleaks, betterleaks, trufflehog and
GitHub's list of supported secret-scanning patterns; the generators are our own. Every value is drawn at run
time from a seeded RNG: the repository holds prefixes, never a token (push protection and `memvault redact
--check` would rightly flag a literal).

A kind is (id, family, provider word, bare, generator):
- bare=True: the token carries a prefix or a structure of its own, so a scanner finds it anywhere (in prose,
  glued to Chinese text); the table puts it both bare and in an assignment.
- bare=False: nothing marks the value but the name next to it (gitleaks' "keyword" rules: `MISTRAL_API_KEY=…`);
  the table puts it only in assignments whose key names the provider.
Plain stdlib, no pytest: bench/redact.py imports it.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from typing import NamedTuple

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase
LALNUM = string.ascii_lowercase + string.digits
UALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
UHEX = "0123456789ABCDEF"
B64 = ALNUM + "+/"
B64URL = ALNUM + "_-"
B32 = string.ascii_uppercase + "234567"
LB32 = string.ascii_lowercase + "234567"
DIGITS = string.digits


class Kind(NamedTuple):
    id: str
    family: str  # ai, cloud, vcs-ci, saas, payments, messaging, structured
    name: str  # the provider word a key name carries: MISTRAL_API_KEY, mistralApiKey
    bare: bool
    make: Callable[[random.Random], str]


def r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def uuid(rng: random.Random, upper: bool = False) -> str:
    h = UHEX if upper else HEX
    return f"{r(rng, h, 8)}-{r(rng, h, 4)}-4{r(rng, h, 3)}-{rng.choice('89ab')}{r(rng, h, 3)}-{r(rng, h, 12)}"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    head = b64url(json.dumps({"alg": rng.choice(["HS256", "RS256", "ES256"]), "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": r(rng, HEX, 16), "iat": rng.randint(1_600_000_000, 1_800_000_000),
                              "role": rng.choice(["user", "service_role", "admin"])}).encode())
    return f"{head}.{body}.{r(rng, B64URL, 43)}"


def azure_client_secret(rng: random.Random) -> str:
    return r(rng, ALNUM + "_~.", 3) + rng.choice(DIGITS) + "Q~" + r(rng, ALNUM + "_~.-", 34)


def _p(prefix: str, alphabet: str, n: int) -> Callable[[random.Random], str]:
    return lambda rng: prefix + r(rng, alphabet, n)


def _k(alphabet: str, n: int) -> Callable[[random.Random], str]:
    return lambda rng: r(rng, alphabet, n)


K = Kind
KINDS: tuple[Kind, ...] = (
    # ---------------------------------------------------------------- AI and model providers
    K("openai-project", "ai", "OPENAI", True,
      lambda g: "sk-proj-" + r(g, B64URL, 74) + "T3BlbkFJ" + r(g, B64URL, 74)),
    K("openai-service-account", "ai", "OPENAI", True,
      lambda g: "sk-svcacct-" + r(g, B64URL, 74) + "T3BlbkFJ" + r(g, B64URL, 74)),
    K("openai-admin", "ai", "OPENAI_ADMIN", True,
      lambda g: "sk-admin-" + r(g, B64URL, 58) + "T3BlbkFJ" + r(g, B64URL, 58)),
    K("anthropic", "ai", "ANTHROPIC", True, lambda g: "sk-ant-api03-" + r(g, B64URL, 93) + "AA"),
    K("anthropic-admin", "ai", "ANTHROPIC_ADMIN", True, lambda g: "sk-ant-admin01-" + r(g, B64URL, 93) + "AA"),
    K("openrouter", "ai", "OPENROUTER", True, _p("sk-or-v1-", HEX, 64)),
    K("deepseek", "ai", "DEEPSEEK", True, _p("sk-", HEX, 32)),
    K("moonshot", "ai", "MOONSHOT", True, _p("sk-", ALNUM, 48)),
    K("groq", "ai", "GROQ", True, _p("gsk_", ALNUM, 52)),
    K("perplexity", "ai", "PERPLEXITY", True, _p("pplx-", ALNUM, 48)),
    K("xai", "ai", "XAI", True, _p("xai-", ALNUM, 80)),
    K("cerebras", "ai", "CEREBRAS", True, _p("csk-", LALNUM, 48)),
    K("nvidia", "ai", "NVIDIA", True, _p("nvapi-", B64URL, 64)),
    K("replicate", "ai", "REPLICATE", True, _p("r8_", ALNUM, 37)),
    K("huggingface", "ai", "HF", True, _p("hf_", string.ascii_letters, 34)),
    K("huggingface-org", "ai", "HF_ORG", True, _p("api_org_", string.ascii_letters, 34)),
    K("togetherai", "ai", "TOGETHER", True, _p("tgp_v1_", B64URL, 43)),
    K("minimax", "ai", "MINIMAX", True, _p("sk-api-", B64URL, 119)),
    K("langsmith", "ai", "LANGSMITH", True, lambda g: "lsv2_pt_" + r(g, HEX, 32) + "_" + r(g, HEX, 10)),
    K("langsmith-service", "ai", "LANGCHAIN", True, lambda g: "lsv2_sk_" + r(g, HEX, 32) + "_" + r(g, HEX, 10)),
    K("pinecone", "ai", "PINECONE", True, lambda g: "pcsk_" + r(g, ALNUM, 6) + "_" + r(g, ALNUM, 63)),
    K("elevenlabs", "ai", "ELEVENLABS", True, _p("sk_", HEX, 48)),
    K("vercel-ai-gateway", "ai", "AI_GATEWAY", True, _p("vck_", B64URL, 56)),
    K("gemini", "ai", "GEMINI", True, _p("AQ.Ab8RN6", B64URL, 44)),
    K("devin-user", "ai", "DEVIN", True, _p("apk_user_", B64, 150)),
    K("devin-service-user", "ai", "DEVIN", True, _p("cog_", LB32, 52)),
    K("wandb-v1", "ai", "WANDB", True, _p("wandb_v1_", ALNUM + "_", 77)),
    K("mistral", "ai", "MISTRAL", False, _k(ALNUM, 32)),
    K("cohere", "ai", "COHERE", False, _k(ALNUM, 40)),
    K("assemblyai", "ai", "ASSEMBLYAI", False, _k(LALNUM, 32)),
    K("deepgram", "ai", "DEEPGRAM", False, _k(HEX, 40)),
    K("wandb", "ai", "WANDB", False, _k(HEX, 40)),
    K("zai", "ai", "ZAI", False, lambda g: r(g, HEX, 32) + "." + r(g, LALNUM, 16)),
    K("upstage", "ai", "UPSTAGE", False, _k(ALNUM, 44)),
    K("ollama", "ai", "OLLAMA", False, lambda g: r(g, HEX, 32) + "." + r(g, B64URL, 24)),
    K("kagi", "ai", "KAGI", False, lambda g: r(g, B64URL, 11) + "." + r(g, B64URL, 43)),
    K("privateai", "ai", "PRIVATE_AI", False, _k(LALNUM, 32)),
    K("stability", "ai", "STABILITY", True, _p("sk-", ALNUM, 48)),
    # ---------------------------------------------------------------- cloud and infrastructure
    K("aws-access-key-id", "cloud", "AWS_ACCESS_KEY", True, _p("AKIA", B32, 16)),
    K("aws-session-key-id", "cloud", "AWS_SESSION", True, _p("ASIA", B32, 16)),
    K("aws-secret-access-key", "cloud", "AWS_SECRET_ACCESS", False, _k(B64, 40)),
    K("aws-bedrock", "cloud", "BEDROCK", True, _p("ABSK", B64, 132)),
    K("gcp-api-key", "cloud", "GOOGLE", True, _p("AIza", B64URL, 35)),
    K("gcp-oauth-secret", "cloud", "GOOGLE_CLIENT", True, _p("GOCSPX-", B64URL, 28)),
    K("gcp-oauth-token", "cloud", "GOOGLE_ACCESS", True, _p("ya29.", B64URL, 150)),
    K("azure-client-secret", "cloud", "AZURE_CLIENT", True, azure_client_secret),
    K("azure-storage-key", "cloud", "AZURE_STORAGE", False, lambda g: r(g, B64, 86) + "=="),
    K("azure-devops-pat", "cloud", "AZURE_DEVOPS", False, _k(LB32, 52)),
    K("alibaba-access-key-id", "cloud", "ALIBABA", True, _p("LTAI", ALNUM, 20)),
    K("alibaba-secret", "cloud", "ALIYUN", False, _k(ALNUM, 30)),
    K("tencent-secret-id", "cloud", "TENCENT", True, _p("AKID", ALNUM, 32)),
    K("digitalocean-pat", "cloud", "DIGITALOCEAN", True, _p("dop_v1_", HEX, 64)),
    K("digitalocean-oauth", "cloud", "DIGITALOCEAN", True, _p("doo_v1_", HEX, 64)),
    K("digitalocean-refresh", "cloud", "DIGITALOCEAN", True, _p("dor_v1_", HEX, 64)),
    K("heroku-v2", "cloud", "HEROKU", True, _p("HRKU-AA", B64URL, 58)),
    K("heroku", "cloud", "HEROKU", False, uuid),
    K("cloudflare-origin-ca", "cloud", "CLOUDFLARE", True,
      lambda g: "v1.0-" + r(g, HEX, 24) + "-" + r(g, HEX, 146)),
    K("cloudflare-api-token", "cloud", "CLOUDFLARE", False, _k(B64URL, 40)),
    K("cloudflare-global-key", "cloud", "CLOUDFLARE", False, _k(HEX, 37)),
    K("flyio", "cloud", "FLY", True, _p("fo1_", B64URL, 43)),
    K("flyio-macaroon", "cloud", "FLY_API", True, lambda g: "FlyV1 fm2_" + r(g, B64, 180)),
    K("scalingo", "cloud", "SCALINGO", True, _p("tk-us-", B64URL, 48)),
    K("planetscale-token", "cloud", "PLANETSCALE", True, _p("pscale_tkn_", B64URL, 43)),
    K("planetscale-oauth", "cloud", "PLANETSCALE", True, _p("pscale_oauth_", B64URL, 43)),
    K("planetscale-password", "cloud", "PLANETSCALE", True, _p("pscale_pw_", B64URL, 43)),
    K("supabase-management", "cloud", "SUPABASE", True, lambda g: "sbp_" + r(g, HEX, 40)),
    K("supabase-secret", "cloud", "SUPABASE", True, _p("sb_secret_", B64URL, 31)),
    K("vercel-pat", "cloud", "VERCEL", True, _p("vcp_", B64URL, 56)),
    K("vercel-app-access", "cloud", "VERCEL", True, _p("vca_", B64URL, 56)),
    K("vercel-app-refresh", "cloud", "VERCEL", True, _p("vcr_", B64URL, 56)),
    K("vercel-integration", "cloud", "VERCEL", True, _p("vci_", B64URL, 56)),
    K("vercel-legacy", "cloud", "VERCEL", False, _k(ALNUM, 24)),
    K("netlify-pat", "cloud", "NETLIFY", True, _p("nfp_", ALNUM, 40)),
    K("netlify-legacy", "cloud", "NETLIFY", False, _k(B64URL, 43)),
    K("doppler-personal", "cloud", "DOPPLER", True, _p("dp.pt.", ALNUM, 43)),
    K("doppler-service", "cloud", "DOPPLER", True, _p("dp.st.", ALNUM, 43)),
    K("doppler-service-account", "cloud", "DOPPLER", True, _p("dp.sa.", ALNUM, 43)),
    K("vault-service", "cloud", "VAULT", True, _p("hvs.", B64URL, 95)),
    K("vault-batch", "cloud", "VAULT", True, _p("hvb.", B64URL, 150)),
    K("terraform-cloud", "cloud", "TFE", True, lambda g: r(g, LALNUM, 14) + ".atlasv1." + r(g, B64URL, 67)),
    K("pulumi", "cloud", "PULUMI", True, _p("pul-", HEX, 40)),
    K("openshift", "cloud", "OPENSHIFT", True, _p("sha256~", B64URL, 43)),
    K("yandex-api-key", "cloud", "YANDEX", True, _p("AQVN", B64URL, 36)),
    K("yandex-static-key", "cloud", "YANDEX", True, _p("YC", B64URL, 38)),
    K("ibm-cloud", "cloud", "IBM_CLOUD", False, _k(B64URL, 44)),
    K("upcloud", "cloud", "UPCLOUD", True, _p("ucat_", ALNUM, 28)),
    K("exoscale", "cloud", "EXOSCALE", True, _p("EXO", ALNUM, 26)),
    K("elastic-cloud", "cloud", "ELASTIC", True, _p("essu_", B64URL, 80)),
    K("cockroachdb", "cloud", "COCKROACH", True, lambda g: "CCDB1_" + r(g, ALNUM, 22) + "_" + r(g, ALNUM, 40)),
    K("tailscale", "cloud", "TAILSCALE", True,
      lambda g: "tskey-auth-" + r(g, ALNUM, 11) + "CNTRL-" + r(g, ALNUM, 33)),
    K("mongodb-atlas-sa", "cloud", "ATLAS", True, _p("mdb_sa_sk_", B64URL, 40)),
    K("databricks", "cloud", "DATABRICKS", True, _p("dapi", HEX, 32)),
    K("civo", "cloud", "CIVO", False, _k(ALNUM, 50)),
    K("scaleway", "cloud", "SCW_SECRET", False, uuid),
    K("render", "cloud", "RENDER", True, _p("rnd_", ALNUM, 32)),
    K("grafana-cloud", "cloud", "GRAFANA", True, _p("glc_", B64, 80)),
    K("grafana-service-account", "cloud", "GRAFANA", True,
      lambda g: "glsa_" + r(g, ALNUM, 32) + "_" + r(g, HEX, 8)),
    K("grafana-api-key", "cloud", "GRAFANA", True,
      lambda g: base64.b64encode(json.dumps({"k": r(g, ALNUM, 32), "n": "ci", "id": g.randint(1, 99)}).encode())
      .decode().rstrip("=")),
    K("dynatrace", "cloud", "DYNATRACE", True, lambda g: "dt0c01." + r(g, UALNUM, 24) + "." + r(g, UALNUM, 64)),
    K("newrelic-user", "cloud", "NEW_RELIC", True, _p("NRAK-", UALNUM, 27)),
    K("newrelic-insert", "cloud", "NEW_RELIC", True, _p("NRII-", B64URL, 32)),
    K("newrelic-browser", "cloud", "NEW_RELIC", True, _p("NRJS-", HEX, 19)),
    K("datadog-api", "cloud", "DATADOG", False, _k(HEX, 32)),
    K("datadog-app", "cloud", "DATADOG_APP", False, _k(HEX, 40)),
    K("sentry-user", "cloud", "SENTRY", True, _p("sntryu_", HEX, 64)),
    K("sentry-org", "cloud", "SENTRY", True,
      lambda g: "sntrys_" + base64.b64encode(json.dumps(
          {"iat": g.randint(1_700_000_000, 1_800_000_000), "url": "https://sentry.io",
           "region_url": "https://us.sentry.io", "org": "acme"}).encode()).decode().rstrip("=")
      + "_" + r(g, B64, 43)),
    K("sentry-legacy", "cloud", "SENTRY_AUTH", False, _k(HEX, 64)),
    K("honeycomb", "cloud", "HONEYCOMB", False, _k(LALNUM, 22)),
    K("posthog-personal", "cloud", "POSTHOG", True, _p("phx_", B64URL, 47)),
    K("sumologic", "cloud", "SUMO", False, _k(ALNUM, 64)),
    # ---------------------------------------------------------------- code hosting, CI, registries
    K("github-pat", "vcs-ci", "GITHUB", True, _p("ghp_", ALNUM, 36)),
    K("github-oauth", "vcs-ci", "GITHUB_OAUTH", True, _p("gho_", ALNUM, 36)),
    K("github-user-to-server", "vcs-ci", "GITHUB_APP", True, _p("ghu_", ALNUM, 36)),
    K("github-server-to-server", "vcs-ci", "GITHUB_APP", True, _p("ghs_", ALNUM, 36)),
    K("github-refresh", "vcs-ci", "GITHUB_REFRESH", True, _p("ghr_", ALNUM, 36)),
    K("github-fine-grained", "vcs-ci", "GITHUB", True,
      lambda g: "github_pat_" + r(g, ALNUM, 22) + "_" + r(g, ALNUM, 59)),
    K("gitlab-pat", "vcs-ci", "GITLAB", True, _p("glpat-", B64URL, 20)),
    K("gitlab-pat-routable", "vcs-ci", "GITLAB", True,
      lambda g: "glpat-" + r(g, B64URL, 36) + "." + r(g, LALNUM, 2) + r(g, LALNUM, 7)),
    K("gitlab-deploy", "vcs-ci", "GITLAB_DEPLOY", True, _p("gldt-", B64URL, 20)),
    K("gitlab-runner", "vcs-ci", "GITLAB_RUNNER", True, _p("glrt-", B64URL, 20)),
    K("gitlab-feed", "vcs-ci", "GITLAB_FEED", True, _p("glft-", B64URL, 20)),
    K("gitlab-scim", "vcs-ci", "GITLAB_SCIM", True, _p("glsoat-", B64URL, 20)),
    K("gitlab-feature-flag", "vcs-ci", "GITLAB_FF", True, _p("glffct-", B64URL, 20)),
    K("gitlab-incoming-mail", "vcs-ci", "GITLAB_MAIL", True, _p("glimt-", B64URL, 25)),
    K("gitlab-agent", "vcs-ci", "GITLAB_AGENT", True, _p("glagent-", B64URL, 50)),
    K("gitlab-oauth-secret", "vcs-ci", "GITLAB_OAUTH", True, _p("gloas-", B64URL, 64)),
    K("gitlab-job", "vcs-ci", "CI_JOB", True, lambda g: "glcbt-" + r(g, ALNUM, 3) + "_" + r(g, B64URL, 20)),
    K("gitlab-trigger", "vcs-ci", "GITLAB_TRIGGER", True, _p("glptt-", HEX, 40)),
    K("gitlab-runner-registration", "vcs-ci", "RUNNER_REGISTRATION", True, _p("GR1348941", B64URL, 20)),
    K("gitlab-session", "vcs-ci", "GITLAB_SESSION", True, _p("_gitlab_session=", LALNUM, 32)),
    K("bitbucket-secret", "vcs-ci", "BITBUCKET", False, _k(B64URL, 64)),
    K("atlassian-api", "vcs-ci", "ATLASSIAN", True, _p("ATATT3", B64URL, 186)),
    K("jira-legacy", "vcs-ci", "JIRA", False, lambda g: r(g, LALNUM, 20) + r(g, HEX, 4)),
    K("npm", "vcs-ci", "NPM", True, _p("npm_", ALNUM, 36)),
    K("pypi", "vcs-ci", "PYPI", True, _p("pypi-AgEIcHlwaS5vcmc", B64URL, 120)),
    K("rubygems", "vcs-ci", "RUBYGEMS", True, _p("rubygems_", HEX, 48)),
    K("clojars", "vcs-ci", "CLOJARS", True, _p("CLOJARS_", LALNUM, 60)),
    K("nuget", "vcs-ci", "NUGET", True, _p("oy2", LALNUM, 43)),
    K("dockerhub-pat", "vcs-ci", "DOCKERHUB", True, _p("dckr_pat_", B64URL, 27)),
    K("dockerhub-org", "vcs-ci", "DOCKERHUB", True, _p("dckr_oat_", B64URL, 32)),
    K("artifactory-api", "vcs-ci", "ARTIFACTORY", True, _p("AKCp", ALNUM, 69)),
    K("artifactory-reference", "vcs-ci", "JFROG", True, _p("cmVmd", ALNUM, 59)),
    K("jfrog-identity", "vcs-ci", "JFROG", False, _k(LALNUM, 64)),
    K("sonarqube", "vcs-ci", "SONAR", True, _p("squ_", HEX, 40)),
    K("sonarqube-project", "vcs-ci", "SONAR", True, _p("sqp_", HEX, 40)),
    K("snyk", "vcs-ci", "SNYK", False, uuid),
    K("codecov", "vcs-ci", "CODECOV", False, uuid),
    K("travis", "vcs-ci", "TRAVIS", False, _k(ALNUM, 22)),
    K("droneci", "vcs-ci", "DRONE", False, _k(ALNUM, 32)),
    K("octopus", "vcs-ci", "OCTOPUS", True, _p("API-", UALNUM, 26)),
    K("prefect", "vcs-ci", "PREFECT", True, _p("pnu_", ALNUM, 36)),
    K("readme", "vcs-ci", "README", True, _p("rdme_", LALNUM, 70)),
    K("postman", "vcs-ci", "POSTMAN", True, lambda g: "PMAK-" + r(g, HEX, 24) + "-" + r(g, HEX, 34)),
    K("sourcegraph", "vcs-ci", "SOURCEGRAPH", True, lambda g: "sgp_" + r(g, HEX, 16) + "_" + r(g, HEX, 40)),
    K("sourcegraph-legacy", "vcs-ci", "SRC_ACCESS", True, _p("sgp_", HEX, 40)),
    K("gitea", "vcs-ci", "GITEA", False, _k(HEX, 40)),
    K("harness", "vcs-ci", "HARNESS", True,
      lambda g: "pat." + r(g, B64URL, 22) + "." + r(g, HEX, 24) + "." + r(g, ALNUM, 20)),
    K("infracost", "vcs-ci", "INFRACOST", True, _p("ico-", ALNUM, 32)),
    K("buildkite", "vcs-ci", "BUILDKITE", True, _p("bkua_", LALNUM, 40)),
    K("deno", "vcs-ci", "DENO", True, _p("ddp_", ALNUM, 36)),
    K("circleci", "vcs-ci", "CIRCLECI", False, _k(HEX, 40)),
    # ---------------------------------------------------------------- SaaS and productivity
    K("notion", "saas", "NOTION", True, lambda g: "ntn_" + r(g, DIGITS, 11) + r(g, ALNUM, 35)),
    K("notion-legacy", "saas", "NOTION", True, _p("secret_", ALNUM, 43)),
    K("linear", "saas", "LINEAR", True, _p("lin_api_", ALNUM, 40)),
    K("linear-client-secret", "saas", "LINEAR_CLIENT", False, _k(HEX, 32)),
    K("figma", "saas", "FIGMA", True, _p("figd_", B64URL, 40)),
    K("airtable", "saas", "AIRTABLE", True, lambda g: "pat" + r(g, ALNUM, 14) + "." + r(g, HEX, 64)),
    K("asana", "saas", "ASANA", False, _k(LALNUM, 32)),
    K("clickup", "saas", "CLICKUP", False, lambda g: "pk_" + r(g, DIGITS, 8) + "_" + r(g, UALNUM, 32)),
    K("typeform", "saas", "TYPEFORM", True, _p("tfp_", B64URL, 59)),
    K("intercom", "saas", "INTERCOM", False, _k(B64URL, 60)),
    K("hubspot-private-app", "saas", "HUBSPOT", True, lambda g: "pat-na1-" + uuid(g)),
    K("hubspot-legacy", "saas", "HUBSPOT", False, lambda g: uuid(g, upper=True)),
    K("contentful", "saas", "CONTENTFUL", True, _p("CFPAT-", B64URL, 43)),
    K("contentful-delivery", "saas", "CONTENTFUL_DELIVERY", False, _k(B64URL, 43)),
    K("frameio", "saas", "FRAMEIO", True, _p("fio-u-", B64URL, 64)),
    K("mapbox-secret", "saas", "MAPBOX", True,
      lambda g: "sk.eyJ1Ijoi" + r(g, B64URL, 40) + "." + r(g, B64URL, 22)),
    K("dropbox-short-lived", "saas", "DROPBOX", True, _p("sl.", B64URL, 135)),
    K("dropbox-long-lived", "saas", "DROPBOX", False, lambda g: r(g, LALNUM, 11) + "AAAAAAAAAA" + r(g, B64URL, 43)),
    K("zendesk", "saas", "ZENDESK", False, _k(ALNUM, 40)),
    K("okta", "saas", "OKTA", False, lambda g: "00" + r(g, B64URL, 40)),
    K("onepassword-service", "saas", "OP_SERVICE_ACCOUNT", True,
      lambda g: "ops_eyJ" + r(g, B64, 300)),
    K("onepassword-secret-key", "saas", "OP_SECRET", True,
      lambda g: "A3-" + r(g, UALNUM, 6) + "-" + r(g, UALNUM, 11) + "-" + "-".join(r(g, UALNUM, 5) for _ in range(3))),
    K("age-secret-key", "saas", "AGE", True, _p("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
    K("easypost", "saas", "EASYPOST", True, _p("EZAK", ALNUM, 54)),
    K("easypost-test", "saas", "EASYPOST", True, _p("EZTK", ALNUM, 54)),
    K("shippo", "saas", "SHIPPO", True, _p("shippo_live_", HEX, 40)),
    K("maxmind", "saas", "MAXMIND", True, lambda g: r(g, ALNUM, 6) + "_" + r(g, ALNUM, 29) + "_mmk"),
    K("adobe-client-secret", "saas", "ADOBE", True, _p("p8e-", ALNUM, 32)),
    K("intra42", "saas", "INTRA", True, _p("s-s4t2ud-", HEX, 64)),
    K("settlemint", "saas", "SETTLEMINT", True, _p("sm_pat_", ALNUM, 16)),
    K("aikido", "saas", "AIKIDO", True, _p("AIK_CI_", ALNUM, 40)),
    K("canva", "saas", "CANVA", True, _p("cnvca", B64URL, 51)),
    K("clickhouse", "saas", "CLICKHOUSE", True, lambda g: "4b1d" + r(g, string.ascii_uppercase, 2) + r(g, ALNUM, 36)),
    K("configcat", "saas", "CONFIGCAT", True,
      lambda g: "configcat-sdk-1/" + r(g, B64URL, 22) + "/" + r(g, B64URL, 22)),
    K("apify", "saas", "APIFY", True, _p("apify_api_", ALNUM, 36)),
    K("defined-networking", "saas", "DNKEY", True,
      lambda g: "dnkey-" + r(g, LALNUM, 26) + "-" + r(g, LALNUM, 52)),
    K("algolia", "saas", "ALGOLIA", False, _k(LALNUM, 32)),
    K("launchdarkly", "saas", "LAUNCHDARKLY", False, lambda g: "api-" + uuid(g)),
    K("mattermost", "saas", "MATTERMOST", False, _k(LALNUM, 26)),
    K("looker", "saas", "LOOKER_CLIENT", False, _k(LALNUM, 24)),
    K("jumpcloud", "saas", "JUMPCLOUD", False, _k(LALNUM, 40)),
    K("disqus", "saas", "DISQUS", False, _k(ALNUM, 64)),
    K("gumroad", "saas", "GUMROAD", False, _k(HEX, 64)),
    K("bitly", "saas", "BITLY", False, _k(HEX, 40)),
    K("amplitude", "saas", "AMPLITUDE", False, _k(HEX, 32)),
    K("rapidapi", "saas", "RAPIDAPI", False, _k(B64URL, 50)),
    K("nytimes", "saas", "NYTIMES", False, _k(ALNUM, 32)),
    K("freshbooks", "saas", "FRESHBOOKS", False, _k(LALNUM, 64)),
    K("beamer", "saas", "BEAMER", False, lambda g: "b_" + r(g, B64URL, 44)),
    K("adafruit", "saas", "ADAFRUIT_IO", False, lambda g: "aio_" + r(g, ALNUM, 28)),
    K("etsy", "saas", "ETSY", False, _k(LALNUM, 24)),
    K("flickr", "saas", "FLICKR", False, _k(HEX, 32)),
    K("finnhub", "saas", "FINNHUB", False, _k(LALNUM, 20)),
    K("twitch", "saas", "TWITCH", False, _k(LALNUM, 30)),
    K("linkedin-secret", "saas", "LINKEDIN", False, _k(ALNUM, 16)),
    K("yandex-oauth", "saas", "YANDEX_OAUTH", False, lambda g: "y0_" + r(g, B64URL, 55)),
    # ---------------------------------------------------------------- payments and finance
    K("stripe-secret", "payments", "STRIPE", True, _p("sk_live_", ALNUM, 99)),
    K("stripe-restricted", "payments", "STRIPE", True, _p("rk_live_", ALNUM, 99)),
    K("stripe-test", "payments", "STRIPE", True, _p("sk_test_", ALNUM, 24)),
    K("stripe-webhook", "payments", "STRIPE_WEBHOOK", True, _p("whsec_", ALNUM, 32)),
    K("square-access", "payments", "SQUARE", True, _p("EAAA", B64URL, 60)),
    K("square-oauth-secret", "payments", "SQUARE", True, _p("sq0csp-", B64URL, 43)),
    K("square-legacy", "payments", "SQUARE", True, _p("sq0atp-", B64URL, 22)),
    K("flutterwave", "payments", "FLUTTERWAVE", True, lambda g: "FLWSECK_TEST-" + r(g, HEX, 32) + "-X"),
    K("duffel", "payments", "DUFFEL", True, _p("duffel_live_", B64URL, 43)),
    K("plaid-access", "payments", "PLAID", True, lambda g: "access-production-" + uuid(g)),
    K("plaid-secret", "payments", "PLAID_SECRET", False, _k(LALNUM, 30)),
    K("paystack", "payments", "PAYSTACK", True, _p("sk_live_", HEX, 40)),
    K("coinbase", "payments", "COINBASE", False, _k(B64URL, 64)),
    K("kraken", "payments", "KRAKEN", False, _k(B64, 88)),
    K("kucoin", "payments", "KUCOIN", False, uuid),
    K("bittrex", "payments", "BITTREX", False, _k(LALNUM, 32)),
    K("gocardless", "payments", "GOCARDLESS", False, lambda g: "live_" + r(g, B64URL, 40)),
    K("finicity", "payments", "FINICITY", False, _k(HEX, 32)),
    K("eth-private-key", "payments", "WALLET_PRIVATE", False, lambda g: "0x" + r(g, HEX, 64)),
    # ---------------------------------------------------------------- messaging, mail, social
    K("slack-bot", "messaging", "SLACK_BOT", True,
      lambda g: f"xoxb-{r(g, DIGITS, 12)}-{r(g, DIGITS, 13)}-{r(g, ALNUM, 24)}"),
    K("slack-user", "messaging", "SLACK_USER", True,
      lambda g: f"xoxp-{r(g, DIGITS, 12)}-{r(g, DIGITS, 12)}-{r(g, DIGITS, 13)}-{r(g, HEX, 32)}"),
    K("slack-app", "messaging", "SLACK_APP", True,
      lambda g: f"xapp-1-A{r(g, UALNUM, 10)}-{r(g, DIGITS, 13)}-{r(g, HEX, 64)}"),
    K("slack-config", "messaging", "SLACK_CONFIG", True, lambda g: "xoxe.xoxp-1-" + r(g, UALNUM, 164)),
    K("slack-refresh", "messaging", "SLACK_REFRESH", True, lambda g: "xoxe-1-" + r(g, UALNUM, 146)),
    K("slack-session", "messaging", "SLACK_SESSION", True,
      lambda g: f"xoxc-{r(g, DIGITS, 12)}-{r(g, DIGITS, 12)}-{r(g, DIGITS, 13)}-{r(g, HEX, 64)}"),
    K("slack-cookie", "messaging", "SLACK_COOKIE", True, lambda g: "xoxd-" + r(g, B64URL, 120)),
    K("slack-webhook", "messaging", "SLACK_WEBHOOK", True,
      lambda g: f"https://hooks.slack.com/services/T{r(g, B32, 8)}/B{r(g, B32, 10)}/{r(g, ALNUM, 24)}"),
    K("teams-webhook", "messaging", "TEAMS_WEBHOOK", True,
      lambda g: f"https://{r(g, LOWER, 7)}.webhook.office.com/webhookb2/{uuid(g)}@{uuid(g)}"
                f"/IncomingWebhook/{r(g, HEX, 32)}/{uuid(g)}"),
    K("discord-bot", "messaging", "DISCORD", True,
      lambda g: "M" + r(g, ALNUM, 23) + "." + r(g, B64URL, 6) + "." + r(g, B64URL, 38)),
    K("discord-webhook", "messaging", "DISCORD_WEBHOOK", True,
      lambda g: f"https://discord.com/api/webhooks/{g.randint(10**17, 10**18)}/{r(g, B64URL, 68)}"),
    K("discord-client-secret", "messaging", "DISCORD_CLIENT", False, _k(B64URL, 32)),
    K("telegram-bot", "messaging", "TELEGRAM", True, lambda g: f"{g.randint(10**8, 10**10)}:AA{r(g, B64URL, 33)}"),
    K("twilio-api-key", "messaging", "TWILIO", True, _p("SK", HEX, 32)),
    K("twilio-auth-token", "messaging", "TWILIO_AUTH", False, _k(HEX, 32)),
    K("sendgrid", "messaging", "SENDGRID", True, lambda g: f"SG.{r(g, B64URL, 22)}.{r(g, B64URL, 43)}"),
    K("sendinblue", "messaging", "BREVO", True, lambda g: "xkeysib-" + r(g, HEX, 64) + "-" + r(g, ALNUM, 16)),
    K("mailgun", "messaging", "MAILGUN", True, _p("key-", HEX, 32)),
    K("mailgun-signing", "messaging", "MAILGUN_SIGNING", False,
      lambda g: r(g, HEX, 32) + "-" + r(g, HEX, 8) + "-" + r(g, HEX, 8)),
    K("mailchimp", "messaging", "MAILCHIMP", True, lambda g: r(g, HEX, 32) + f"-us{g.randint(1, 21)}"),
    K("postmark", "messaging", "POSTMARK", False, uuid),
    K("messagebird", "messaging", "MESSAGEBIRD", False, _k(ALNUM, 25)),
    K("sendbird", "messaging", "SENDBIRD", False, _k(HEX, 40)),
    K("facebook-page", "messaging", "FACEBOOK_PAGE", True, _p("EAAC", ALNUM, 180)),
    K("facebook-user", "messaging", "FB", True, _p("EAAM", ALNUM, 150)),
    K("facebook-app-token", "messaging", "FACEBOOK_APP", True,
      lambda g: r(g, DIGITS, 15) + "|" + r(g, B64URL, 27)),
    K("facebook-secret", "messaging", "FACEBOOK", False, _k(HEX, 32)),
    K("twitter-bearer", "messaging", "TWITTER", True, lambda g: "A" * 22 + r(g, ALNUM, 90)),
    K("twitter-access-secret", "messaging", "TWITTER_ACCESS", False, _k(ALNUM, 45)),
    K("twitter-api-secret", "messaging", "TWITTER_API", False, _k(ALNUM, 50)),
    K("gitter", "messaging", "GITTER", False, _k(LALNUM, 40)),
    # ---------------------------------------------------------------- structured secrets
    K("jwt", "structured", "JWT", True, jwt),
    K("jwt-base64", "structured", "SESSION", True, lambda g: base64.b64encode(jwt(g).encode()).decode()),
    K("azure-servicebus", "structured", "SERVICEBUS_CONNECTION", True,
      lambda g: f"Endpoint=sb://{r(g, LOWER, 8)}.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={r(g, B64, 43)}="),
    K("azure-appconfig", "structured", "APPCONFIG_CONNECTION", True,
      lambda g: f"Endpoint=https://{r(g, LOWER, 8)}.azconfig.io;Id={r(g, B64URL, 4)}-l1-s0:{r(g, B64URL, 20)};"
                f"Secret={r(g, B64, 43)}="),
    K("azure-sas-url", "structured", "SAS_URL", True,
      lambda g: f"https://{r(g, LOWER, 9)}.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl"
                f"&se=2027-01-01T00:00:00Z&sig={r(g, ALNUM, 40)}%3D"),
    K("mongodb-uri", "structured", "MONGO_URI", True,
      lambda g: f"mongodb+srv://app:{r(g, ALNUM, 20)}@cluster0.{r(g, LALNUM, 5)}.mongodb.net/prod"),
    K("sidekiq-url", "structured", "SIDEKIQ", True,
      lambda g: f"https://{r(g, HEX, 8)}:{r(g, HEX, 8)}@gems.contribsys.com/"),
)

# Where a bare token sits in a chat turn: no key name next to it, no "password is" either.
BARE_EN = (
    "Use {v} for the staging project.",
    "It printed ({v}) and then crashed.",
    "The old one was `{v}` but I rotated it.",
    "copy this: {v}",
)
BARE_ZH = (
    "把{v}发给运维了",
    "日志里出现了「{v}」，怎么回事？",
    "测试环境用 {v} 就行。",
    "我复制的是（{v}）对吗",
)

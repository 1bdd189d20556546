"""The offline engine's language-independent path (distill/offline/anylang.py), by class of false or lost card
found on the tuning half of issue 32's multilingual set: each test holds sentences written for it (not the set's)
in at least two languages, and what the path must and must not make of them."""

from __future__ import annotations

import pytest

from memvault.distill.offline import anylang, episode_statements
from memvault.model import Episode


def said(text: str) -> list[tuple[str, str]]:
    assert anylang.unread(text), text
    return anylang.statements(text)


def titles(text: str) -> list[str]:
    return [clause for _kind, clause in said(text)]


def engine_statements(user: str):
    """The statements the offline engine takes from a user's message, whichever path reads it."""
    ep = Episode(id="e1", at="2026-01-01T00:00:00Z", project="p", session="s", turn=1, user=user, assistant="OK")
    return episode_statements(ep)


def statements_of(user: str) -> list[str]:
    return [st.text for st in engine_statements(user)]


@pytest.mark.parametrize("text", [
    "Regla del equipo: nunca se hace merge a producción sin revisión.",  # "a" is Spanish too
    "Regel: Jeder Service braucht einen Healthcheck, sonst wird nicht deployt.",
    "Finalement on abandonne Redis pour l'instant : on passe à un cache en mémoire.",  # "on", "a": French too
    "Was wäre, wenn wir stattdessen Kafka nehmen würden?",
])
def test_a_short_message_whose_function_words_english_shares_is_still_read_as_its_language(text):
    assert anylang.unread(text)


@pytest.mark.parametrize("text", [
    "We use Postgres in production on a VPS.", "The deploy target is now Hetzner, not Fly.io.",
    "ok", "Die hard fan here, see you on Friday!", "以后都用 pnpm，不要再用 npm 了。",
    "Always run `make lint` before you push. It is in `scripts/ci.sh`: pas de merge sinon",
])
def test_english_and_chinese_stay_with_the_cue_tables(text):
    assert not anylang.unread(text)


def test_a_clause_saying_what_is_not_used_goes_with_the_statement_and_alone_makes_no_card():
    assert titles("앱은 Flutter 로 만들기로 했어요. React Native 는 안 써요.") == [
        "앱은 Flutter 로 만들기로 했어요、React Native 는 안 써요"]
    assert titles("Wir nehmen Caddy als Proxy für alle Dienste. Nginx nutzen wir nicht mehr.") == [
        "Wir nehmen Caddy als Proxy für alle Dienste, Nginx nutzen wir nicht mehr"]
    for alone in ("Nous n'utilisons pas Redis pour le cache.", "No usamos Docker Swarm en el servidor.",
                  "Kubernetes 는 안 써요."):
        assert said(alone) == [], alone
    # Portuguese "no" is "in the", not a negation
    assert titles("Estou usando Django 5 no projeto da escola.") == ["Estou usando Django 5 no projeto da escola"]
    # "ne … jamais" is a rule, not a negation
    assert said("Une PR ne dépasse jamais 300 lignes.") == [("rule", "Une PR ne dépasse jamais 300 lignes")]


def test_what_is_dropped_goes_with_what_replaces_it_in_one_card():
    assert titles("Finalement on abandonne MongoDB : on passe à PostgreSQL 16 pour tout.") == [
        "Finalement on abandonne MongoDB, on passe à PostgreSQL 16 pour tout"]
    assert titles("Dejamos Heroku y pasamos todo a Render por el precio.") == [
        "Dejamos Heroku y pasamos todo a Render por el precio"]


def test_never_x_always_y_is_one_rule_in_any_language():
    assert said("Jamais de `console.log` en production, on passe toujours par `pino`.") == [
        ("rule", "Jamais de `console.log` en production, on passe toujours par `pino`")]
    assert said("develop 브랜치에 직접 커밋 금지, 무조건 MR 로 올려야 해요.") == [
        ("rule", "develop 브랜치에 직접 커밋 금지、무조건 MR 로 올려야 해요")]


def test_two_things_joined_by_and_are_two_statements_when_each_side_names_one():
    assert titles("Usamos Vue 3 para el panel de control y Supabase para la autenticación.") == [
        "Usamos Vue 3 para el panel de control", "Supabase para la autenticación"]
    assert titles("Le dépôt est sur git.example.org et la CI tourne sur Woodpecker 2.") == [
        "Le dépôt est sur git.example.org", "la CI tourne sur Woodpecker 2"]
    assert titles("On déploie avec Docker Compose et Traefik.") == ["On déploie avec Docker Compose et Traefik"]
    # the right side has no subject of its own: one statement
    assert titles("El cliente se llama Lupita y vende en Guadalajara.") == [
        "El cliente se llama Lupita y vende en Guadalajara"]


def test_an_instruction_that_holds_is_a_statement_even_naming_nothing_and_each_of_its_topics_is_one():
    assert said("返事はいつも丁寧語で、箇条書き中心にしてください。") == [
        ("preference", "返事はいつも丁寧語で、箇条書き中心にしてください")]
    assert said("대답은 항상 존댓말로 해 주시고, 변수 이름은 영어로 써 주세요.") == [
        ("preference", "대답은 항상 존댓말로 해 주시고"), ("preference", "변수 이름은 영어로 써 주세요")]
    assert said("Antworte bitte immer kurz und auf Deutsch.") == [
        ("preference", "Antworte bitte immer kurz und auf Deutsch")]
    for still in ("Il est toujours aussi lent, ce serveur.", "Ça plante toujours après la mise à jour.",
                  "Der Build schlägt immer wieder fehl."):  # "still", "again and again": not "always"
        assert said(still) == [], still


@pytest.mark.parametrize("text", [
    "¡Genial, muchas gracias por lo de Docker!", "Super, merci pour l'aide avec FastAPI !",
    "Danke für die Hilfe mit Kubernetes!", "Kotlin のことありがとうございます！", "Docker 설정 감사합니다!",
    "Peut-être qu'on passera sur Kubernetes un jour.", "Vielleicht nehmen wir irgendwann Rust 2.0.",
    "Quizás usemos Astro 5 más adelante.", "たぶん Vue 3 に移行します。", "아마 Svelte 5 로 바꿀 것 같아요.",
    "Hola!", "Bonjour Claude !",
    # a belief, a doubt, what someone else said
    "Je pense que le problème vient de Nginx.", "Creo que el error viene de Prisma.",
    "このエラーは Docker のせいだと思います。", "제 생각엔 Redis 가 문제인 것 같아요.",
    "Mi jefe dice que usemos Kubernetes, pero no estoy seguro.",
    # a bug report: "toujours pas" is "still not", no rule
    "Ça ne marche toujours pas avec Python 3.12, même erreur.",
])
def test_thanks_greetings_hedges_and_beliefs_make_no_statement(text):
    assert anylang.statements(text) == [] and statements_of(text) == []


def test_a_topic_clause_that_names_nothing_opens_the_statement_after_it():
    assert titles("Le serveur de sauvegarde, c'est backup.example.fr sur le port 2222.") == [
        "Le serveur de sauvegarde, c'est backup.example.fr sur le port 2222"]
    assert anylang.statements("Ok, on garde FastAPI.") == [("decision", "on garde FastAPI")]  # "Ok" opens nothing


def test_a_kind_word_inside_a_name_is_no_kind_word():
    # "Codeberg" holds the Spanish "debe" (must), "Nieder…" the German "nie" (never)
    assert said("Le dépôt est sur Codeberg, pas sur GitHub.") == [
        ("fact", "Le dépôt est sur Codeberg, pas sur GitHub")]
    assert said("Der Server steht in der Niederlassung-Nord.")[0][0] == "fact"


def test_english_cue_words_in_another_language_are_false_friends_not_cues():
    got = statements_of("Note pour la suite : le certificat expire le 3 juin 2027, chez Let's Encrypt.")
    assert "pour la suite" not in got and got[0].endswith("le certificat expire le 3 juin 2027"), got


@pytest.mark.parametrize("text", [
    "Pourquoi FastAPI renvoie une 422 ici", "Warum braucht Go 1.22 hier ein `make`",
    "Kannst du mir den Code von `main.go` nochmal zeigen", "Tu peux relancer les tests de FastAPI",
    "Rails 7 の `has_many` はどう使いますか", "Flutter 에서 `setState` 는 언제 쓰나요",
])
def test_a_question_without_a_question_mark_makes_no_statement(text):
    assert anylang.statements(text) == [] and statements_of(text) == []


def test_output_pasted_without_a_fence_is_no_statement_but_the_message_around_it_is():
    text = ("Le build casse depuis la mise à jour de Vite 5 :\n"
            "Traceback (most recent call last):\n  File \"app/main.py\", line 3, in <module>\n"
            "ModuleNotFoundError: No module named 'fastapi'\n"
            "Au fait, la prod tourne sur Debian 12.")
    got = titles(text)
    assert got == ["Le build casse depuis la mise à jour de Vite 5", "la prod tourne sur Debian 12"], got


@pytest.mark.parametrize("clause, change", [
    ("Wir sind von Jenkins auf GitHub Actions umgestiegen, wegen der Kosten", (None, "Jenkins", "GitHub Actions")),
    ("On a migré de Heroku vers Fly.io hier soir", (None, "Heroku", "Fly.io")),
    ("Finalement on abandonne MySQL 8, on passe à PostgreSQL 16 pour tout", (None, "MySQL 8", "PostgreSQL 16")),
    ("Dejamos Heroku y pasamos todo a Render por el precio", (None, "Heroku", "Render")),
    ("ステージング環境を Heroku から Fly.io に移行しました", ("ステージング環境", "Heroku", "Fly.io")),
    ("인증을 Auth0 에서 Keycloak 으로 옮겼어요", ("인증", "Auth0", "Keycloak")),
    ("Wir nehmen Go 1.22 für den neuen Dienst", None),
    ("Le dépôt est passé de 2 Go à 3 Go", None),  # no change verb that says a switch: a measure, not a state
])
def test_a_change_of_state_gives_its_old_and_new_value_in_any_language(clause, change):
    assert anylang.change_of(clause) == change


def test_a_change_of_state_is_a_state_statement_for_the_engine():
    got = [(st.kind, st.subject, st.old, st.new)
           for st in engine_statements("백엔드를 Firebase 에서 Supabase 로 옮겼어요. 비용 때문에요.")]
    assert got == [("state", "백엔드", "Firebase", "Supabase")]


def test_what_is_said_of_the_moment_is_no_memory_unless_it_also_decides_or_rules():
    for moment in ("Heute arbeite ich am Backend mit Go 1.22 weiter.", "Hoy seguimos con el carrito de Stripe.",
                   "오늘은 Flutter 위젯 테스트까지 할게요.", "Bon, on reprend dans 10 minutes avec FastAPI."):
        assert anylang.statements(moment) == [], moment
    assert said("Aujourd'hui on a décidé de passer à Astro 5.") == [
        ("decision", "Aujourd'hui on a décidé de passer à Astro 5")]
    assert titles("Le module `logging` reste obligatoire pour tous les services.") == [
        "Le module `logging` reste obligatoire pour tous les services"]  # "logging" holds no "oggi"

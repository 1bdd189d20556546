# ruff: noqa: E501  (the conversations are data: one utterance per line reads better than wrapped)
"""The labelled extraction set, as written by hand: conversations, their turns and the cards each turn should yield.

`python eval/distill/author.py` renders them into chat logs of every capture format (eval/distill/inputs/) and
eval/distill/labels.jsonl. The rendered files are the frozen set; this file is how they were written (rerunning
it must reproduce them byte for byte, tests/e2e/test_distill_eval.py checks that). Labelling rules: README.md.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass
class C:
    kind: str
    subject: str
    value: str
    evidence: str  # the words of the USER's text the card rests on (checked to be in the episode)
    entities: tuple = ()
    tag: str | None = None  # a name for `sup` of a later card
    sup: str | None = None  # tag of the earlier card (same file) this one replaces
    title: str | None = None


@dataclass
class T:
    user: str
    asst: str
    cards: list = field(default_factory=list)
    nothing: str | None = None  # why the turn yields no card (the nothing-set category)


def P(user, asst, *cards):
    return T(user, asst, list(cards))


def N(why, user, asst):
    return T(user, asst, [], why)


@dataclass
class Conv:
    file: str
    fmt: str
    lang: str
    start: str  # ISO time of the first turn
    turns: list
    session: str = ""
    project: str = ""
    title: str = ""
    persona: tuple = ("User", "Assistant")


# ============================================================================================ the set

CONVS: list[Conv] = []

# ------------------------------------------------------------------------------------------- jsonl
CONVS.append(Conv("jsonl-en.jsonl", "jsonl", "en", "2026-02-02T19:00:00Z", session="s-homelab", project="homelab", turns=[
    P("Quick context for later: the NAS IP is 192.168.1.40 and it runs TrueNAS Scale.",
      "Got it. With TrueNAS Scale you can run apps as containers too, if you ever want that.",
      C("fact", "NAS IP", "192.168.1.40", "the NAS IP is 192.168.1.40", ("NAS",)),
      C("fact", "NAS OS", "TrueNAS Scale", "it runs TrueNAS Scale", ("NAS", "TrueNAS Scale"), tag="nas-os")),
    N("question", "should we put Jellyfin on the NAS or on the mini PC?",
      "I'd put it on the mini PC: it has Quick Sync for hardware transcoding, the NAS CPU doesn't."),
    P("Let's go with the mini PC for Jellyfin, the NAS cpu is too weak for transcoding anyway.",
      "Good call. I'd also mount the media share over NFS from the NAS.",
      C("decision", "Jellyfin host", "mini PC", "Let's go with the mini PC for Jellyfin", ("Jellyfin", "mini PC"))),
    N("hypothetical", "what if we used Proxmox on the mini pc instead of plain debian? just thinking out loud",
      "Proxmox would let you snapshot VMs before upgrades; the cost is a bit more RAM overhead."),
    N("negated", "I didn't say we'd go with Proxmox, I only asked. Don't install anything yet.",
      "Understood, nothing installed. Debian stays as is."),
    N("chit-chat", "lol I always forget to feed the cat before these sessions, brb",
      "No problem, take your time!"),
    P("Rule for the homelab: never expose the admin panels to the internet, everything goes thru wireguard.",
      "Understood. I'll assume WireGuard for any remote access from now on.",
      C("rule", "admin panel exposure", "never expose admin panels to the internet; remote access only through WireGuard",
        "never expose the admin panels to the internet, everything goes thru wireguard", ("WireGuard",))),
    N("hedge", "maybe we should switch the backups to restic at some point, not sure yet",
      "restic would give you deduplicated, encrypted backups; happy to sketch a plan when you decide."),
    P("ok cool. btw the reverse proxy listens on port 8443, not 443, remember that",
      "Noted: reverse proxy on 8443.",
      C("fact", "reverse proxy port", "8443", "the reverse proxy listens on port 8443", ("reverse proxy",))),
    N("code", "here's my current compose, why does it restart in a loop?\n```yaml\nservices:\n  jellyfin:\n"
      "    image: jellyfin/jellyfin\n    restart: always\n    network_mode: host\n    # must run as root??\n```",
      "`restart: always` hides the crash; check `docker logs jellyfin`, it's probably the config volume permissions."),
    N("question", "Should we still use Pi-hole now that the router does DNS blocking?",
      "If the router's blocking is good enough, dropping Pi-hole removes one thing to maintain."),
    P("Update: we moved the NAS from TrueNAS Scale to Unraid over the weekend. Mixed disk sizes were a pain on ZFS.",
      "Makes sense, Unraid handles mixed disks well. Your NFS exports will need re-creating.",
      C("state", "NAS OS", "Unraid", "we moved the NAS from TrueNAS Scale to Unraid", ("NAS", "Unraid"), sup="nas-os")),
    P("I prefer short answers with the exact commands, no long explanations pls",
      "Will do.",
      C("preference", "answer style", "short answers with the exact commands", "I prefer short answers with the exact commands")),
]))

CONVS.append(Conv("jsonl-zh.jsonl", "jsonl", "zh", "2026-01-12T02:00:00Z", session="s-小账本", project="xiaozhangben", turns=[
    P("小账本的后端我们决定用 FastAPI，Django 太重了，管理后台以后再说。",
      "好的，FastAPI 加 SQLAlchemy 就够用了。",
      C("decision", "后端框架", "FastAPI", "小账本的后端我们决定用 FastAPI", ("FastAPI", "小账本"))),
    N("question", "数据库要不要用 SQLite？用户量很小。",
      "可以，SQLite 足够，备份也简单，直接拷文件就行。"),
    P("那就先用 SQLite 吧，够用了。",
      "好，我先把建表脚本写好。",
      C("decision", "数据库", "SQLite", "那就先用 SQLite 吧", ("SQLite",), tag="db")),
    N("hypothetical", "如果以后要多人同时记账，用 Postgres 呢？",
      "多人同时写的话 Postgres 更合适，不过现在没必要。"),
    P("对了，金额一律用整数存，单位是分，禁止用浮点数。",
      "明白，所有金额字段都用 INTEGER，单位分。",
      C("rule", "金额存储", "整数存储，单位为分，禁止浮点数", "金额一律用整数存，单位是分，禁止用浮点数")),
    N("chit-chat", "今天开会又定了一堆事，不过都跟这个项目无关，累死了😮‍💨",
      "辛苦了，休息一下再继续吧。"),
    P("我喜欢接口返回的字段用 snake_case，别用驼峰。",
      "好的，响应模型统一 snake_case。",
      C("preference", "接口字段命名", "snake_case", "我喜欢接口返回的字段用 snake_case", ("snake_case",))),
    N("hedge", "可能要加个导出 Excel 的功能，还没想好。",
      "想好了告诉我，openpyxl 就能做。"),
    P("部署的话，服务器端口是 8080，域名是 ledger.example.cn，你写配置的时候注意下。",
      "好的，我把 uvicorn 的端口设成 8080。",
      C("fact", "服务端口", "8080", "服务器端口是 8080"),
      C("fact", "域名", "ledger.example.cn", "域名是 ledger.example.cn", ("ledger.example.cn",))),
    P("不用 SQLite 了，改用 Postgres，家里人要一起记账，并发写会锁库。",
      "好，我来写迁移脚本，把 SQLite 的数据导到 Postgres。",
      C("state", "数据库", "Postgres", "不用 SQLite 了，改用 Postgres", ("Postgres",), sup="db")),
    N("negated", "我没决定用 Redis 啊，只是问问缓存怎么做，你先别加。",
      "好的，不加 Redis。缓存的话可以先用进程内的 LRU。"),
    P("记住：以后代码注释都用英文。",
      "好的，注释一律英文。",
      C("preference", "代码注释语言", "英文", "以后代码注释都用英文")),
    N("question", "这个 bug 是不是因为时区？我记得之前好像决定过统一用 UTC？",
      "很可能是时区：数据库里存的是本地时间。建议统一存 UTC。"),
]))

# ------------------------------------------------------------------------------------------- openai
CONVS.append(Conv("openai-en.json", "openai", "en", "2026-02-20T09:00:00Z", session="s-mobile", project="mobile-app", turns=[
    P("ok we'll go with React Native for the mobile app. The contractor knows TS and we can share the API client.",
      "Sounds good. React Native also lets you reuse your web validation code.",
      C("decision", "mobile framework", "React Native", "we'll go with React Native for the mobile app", ("React Native",))),
    N("question", "Should we use Expo or bare RN?",
      "Expo. You get OTA updates and EAS builds, and you can still eject later."),
    P("yeah expo sounds right, let's use Expo.",
      "Great, Expo it is. I'd also use Expo Router and NativeWind for styling.",
      C("decision", "React Native toolchain", "Expo", "let's use Expo", ("Expo",))),
    P("For state we're using Redux Toolkit for now, the web app already has it.",
      "OK, I'll wire Redux Toolkit into the app shell.",
      C("fact", "state management", "Redux Toolkit", "For state we're using Redux Toolkit", ("Redux Toolkit",), tag="state")),
    P("The API base url for staging is https://staging-api.example.com/v2",
      "Noted, I'll put it in app.config.ts under extra.apiUrl.",
      C("fact", "staging API base URL", "https://staging-api.example.com/v2", "The API base url for staging is https://staging-api.example.com/v2")),
    N("hypothetical", "hypothetically, if we used Flutter, how much would we need to rewrite?",
      "Everything in the UI layer; only the backend contracts would survive."),
    P("You must never log the user's auth token, not even in debug builds.",
      "Understood, I'll add a redacting logger wrapper.",
      C("rule", "auth token logging", "never log the user's auth token, even in debug builds", "You must never log the user's auth token")),
    N("chit-chat", "I always get confused by metro bundler errors lol. anyway what does `Unable to resolve module ./Foo` mean",
      "Usually a wrong path or a stale cache: try `npx expo start -c`."),
    P("Thanks for the list. I looked at it on the train. A couple of things: the onboarding flow looks fine, I don't care "
      "much about the colours. But one thing I do care about: I prefer dark mode as the default theme. The rest we can "
      "tweak later.",
      "Got it, dark mode by default with a toggle in settings.",
      C("preference", "default theme", "dark mode", "I prefer dark mode as the default theme")),
    P("Note: the app store account is under the company name Brightleaf Labs, not my personal one.",
      "Noted, I'll use Brightleaf Labs as the publisher.",
      C("fact", "App Store account owner", "Brightleaf Labs", "the app store account is under the company name Brightleaf Labs", ("Brightleaf Labs", "App Store"))),
    N("quoted", "> we'll go with Redux for state, it's the industry standard\nthat's what the blog post says, but I'm not convinced. thoughts?",
      "Redux is fine but heavy for a small app; Zustand or Jotai are lighter."),
    N("assistant-proposal", "ok give me the options for push notifications",
      "I'd recommend we go with Firebase Cloud Messaging; we'll use OneSignal only if you need a marketing dashboard."),
    P("We switched state management from Redux to Zustand last sprint, Redux was too much boilerplate.",
      "Makes sense. I'll remove the Redux store and the slices.",
      C("state", "state management", "Zustand", "We switched state management from Redux to Zustand", ("Zustand",), sup="state")),
]))

CONVS.append(Conv("openai-zh.json", "openai", "zh", "2026-01-15T06:00:00Z", session="s-code-review", project="code-review", turns=[
    P("我们组的代码评审规则定一下：每个 PR 至少 1 人批准，涉及数据库迁移的必须 2 人批准。",
      "好的，四个人的小组这样很合理。",
      C("rule", "PR 批准人数", "至少 1 人批准", "每个 PR 至少 1 人批准"),
      C("rule", "数据库迁移 PR 批准人数", "必须 2 人批准", "涉及数据库迁移的必须 2 人批准")),
    N("question", "PR 要不要限制行数？",
      "建议不超过 400 行，超过就拆分。"),
    P("好，就按你说的，PR 不超过 400 行。",
      "好的，我把这条加到 CONTRIBUTING.md。",
      C("rule", "PR 行数", "不超过 400 行", "就按你说的，PR 不超过 400 行")),
    P("周五下午禁止合并到 main。",
      "收到，规则汇总：1 人批准（迁移 2 人）、PR ≤ 400 行、周五下午不合并。",
      C("rule", "周五合并", "周五下午禁止合并到 main", "周五下午禁止合并到 main", ("main",))),
    N("hypothetical", "如果周五有紧急修复呢？也不让合吗？",
      "紧急修复可以走 hotfix 分支，事后补评审。"),
    P("CI 用的是 GitHub Actions，代码评审现在在 Gerrit 上做。",
      "了解，Gerrit 的 Verified 标签可以接 GitHub Actions 的结果。",
      C("fact", "CI 平台", "GitHub Actions", "CI 用的是 GitHub Actions", ("GitHub Actions",)),
      C("fact", "代码评审工具", "Gerrit", "代码评审现在在 Gerrit 上做", ("Gerrit",), tag="review")),
    N("hedge", "可能以后要上 GitLab，看公司安排吧。",
      "好的，到时候迁移也不难。"),
    N("quoted", "今天看到别的组的规范写着「所有函数必须写 docstring」，挺严格的哈哈。",
      "有的团队确实这样要求，对公共接口来说是好习惯。"),
    P("我个人偏好 commit message 用英文写，中文在某些终端里会乱码。",
      "好的，commit message 用英文。",
      C("preference", "commit message 语言", "英文", "我个人偏好 commit message 用英文写")),
    P("代码评审不用 Gerrit 了，全部改用 GitHub 的 PR，大家都更熟。",
      "好的，我把 Gerrit 的 hook 去掉，分支保护规则改到 GitHub 上。",
      C("state", "代码评审工具", "GitHub PR", "代码评审不用 Gerrit 了，全部改用 GitHub 的 PR", ("GitHub",), sup="review")),
    N("chit-chat", "嗯嗯，谢谢，今天先到这吧，剩下的下周再定。",
      "好的，下周见！"),
    N("negated", "合并方式我们还没定，先别改仓库设置。",
      "好的，仓库设置保持不变。"),
    N("question", "你觉得 squash merge 好还是 rebase merge 好？",
      "小组里建议 squash merge，历史更干净。"),
    P("定了，squash merge。",
      "好，我在仓库设置里只保留 squash merge。",
      C("decision", "合并方式", "squash merge", "定了，squash merge")),
]))

# ------------------------------------------------------------------------------------------- chatgpt
CONVS.append(Conv("chatgpt-en.json", "chatgpt", "en", "2026-03-01T18:00:00Z", session="6a1f0c2e-travel-0001", title="Lisbon trip", turns=[
    P("I'm planning a trip to Lisbon in May. I prefer aisle seats and I never book red-eye flights.",
      "Great choice, May is lovely there. I'll keep to daytime flights with aisle seats.",
      C("preference", "flight seat", "aisle seat", "I prefer aisle seats"),
      C("preference", "red-eye flights", "never book red-eye flights", "I never book red-eye flights")),
    N("question", "What's the weather like in May there?",
      "Mild: around 17-24°C, mostly sunny, the sea is still cold."),
    P("Remember that my passport expires on 2027-03-14.",
      "Noted. That's fine for May; some countries want 6 months of validity, so keep it in mind for 2026 trips.",
      C("fact", "passport expiry", "2027-03-14", "my passport expires on 2027-03-14", ("passport",))),
    N("hypothetical", "If I went in June instead would it be much more expensive?",
      "June has the Santo António festivals, so hotels are pricier, maybe 20-30%."),
]))
CONVS.append(Conv("chatgpt-en.json", "chatgpt", "en", "2026-03-03T19:00:00Z", session="6a1f0c2e-diet-0002", title="Quick dinners", turns=[
    P("I'm vegetarian, so never suggest recipes with meat or fish.",
      "Understood, vegetarian recipes only.",
      C("preference", "diet", "vegetarian: no meat or fish", "I'm vegetarian, so never suggest recipes with meat or fish")),
    N("question", "can you give me a recipe for a quick dinner? something I can make in 20 min",
      "Chickpea curry: onion, garlic, canned chickpeas, coconut milk, curry paste, 20 minutes."),
    N("chit-chat", "Haha I always burn the garlic, any tips?",
      "Add it later, after the onions soften, and keep the heat medium."),
    P("My partner is allergic to peanuts - note that for all future recipes.",
      "Noted: no peanuts in anything I suggest.",
      C("fact", "partner's allergy", "peanuts", "My partner is allergic to peanuts", ("partner",))),
]))
CONVS.append(Conv("chatgpt-en.json", "chatgpt", "en", "2026-03-06T20:00:00Z", session="6a1f0c2e-blog-0003", title="Blog hosting", turns=[
    P("My blog runs on Hugo, hosted on Netlify. The build takes ~4 min which is annoying.",
      "Netlify's free tier builds are slow; caching the resources dir helps.",
      C("fact", "blog generator", "Hugo", "My blog runs on Hugo", ("Hugo",)),
      C("fact", "blog hosting", "Netlify", "hosted on Netlify", ("Netlify",), tag="host")),
    N("question", "Should I move it to Astro? Everyone seems to be using it these days.",
      "Only if you want islands of interactivity; for a text blog Hugo is faster."),
    P("Moved the blog from Netlify to Cloudflare Pages yesterday, builds are way faster.",
      "Nice. Remember to update the DNS TTL and the redirects file.",
      C("state", "blog hosting", "Cloudflare Pages", "Moved the blog from Netlify to Cloudflare Pages", ("Cloudflare Pages",), sup="host")),
    N("hedge", "I'll probably write a post about the move, maybe next week.",
      "That would be a useful post for other Hugo users."),
]))

CONVS.append(Conv("chatgpt-zh.json", "chatgpt", "zh", "2026-01-05T12:00:00Z", session="b7e2d4a0-riyu-0001", title="学日语", turns=[
    P("我决定从下个月开始学日语，目标是年底考 N3。",
      "很好的目标！每天一小时的话，一年考 N3 是现实的。",
      C("decision", "日语学习目标", "年底考 N3", "我决定从下个月开始学日语，目标是年底考 N3", ("日语", "N3"))),
    N("question", "用哪本教材比较好？",
      "推荐《大家的日语》或者《标准日本语》，前者练习多。"),
    P("就用《大家的日语》吧，书店正好有。",
      "好的，配套的练习册也建议买。",
      C("decision", "日语教材", "《大家的日语》", "就用《大家的日语》吧", ("大家的日语",))),
    N("hypothetical", "要是每天只有半小时，能考过吗？",
      "难度会大一些，可能要到明年春天。"),
    P("我不喜欢背单词 app，别再推荐了。",
      "好的，以后用教材和例句记单词。",
      C("preference", "背单词 app", "不要推荐背单词 app", "我不喜欢背单词 app，别再推荐了")),
]))
CONVS.append(Conv("chatgpt-zh.json", "chatgpt", "zh", "2026-01-09T13:00:00Z", session="b7e2d4a0-jiankang-0002", title="饮食和健康", turns=[
    P("我对青霉素过敏，这个一定要记住。",
      "记住了：青霉素过敏。就医时也请主动告诉医生。",
      C("fact", "药物过敏", "青霉素", "我对青霉素过敏", ("青霉素",))),
    N("hedge", "最近老是失眠，可能是咖啡喝多了吧哈哈",
      "有可能，下午两点后不喝咖啡试试。"),
    P("以后推荐食谱都不要放香菜，我受不了那个味道。",
      "好的，食谱里不放香菜。",
      C("preference", "香菜", "食谱里不要放香菜", "以后推荐食谱都不要放香菜", ("香菜",))),
    N("hypothetical", "如果我改成晚上跑步，会不会更影响睡眠？",
      "睡前两小时内剧烈运动可能影响入睡，傍晚跑比较好。"),
]))
CONVS.append(Conv("chatgpt-zh.json", "chatgpt", "zh", "2026-01-18T08:00:00Z", session="b7e2d4a0-che-0003", title="汽车保养", turns=[
    P("我的车是 2019 款卡罗拉双擎，快 6 万公里了。",
      "6 万公里要做一次比较全面的保养了。",
      C("fact", "车型", "2019 款卡罗拉双擎", "我的车是 2019 款卡罗拉双擎", ("卡罗拉",))),
    N("question", "保养在 4S 店还是路边店？",
      "常规保养路边连锁店就行，比如途虎，价格便宜一半。"),
    P("定了，以后保养都去途虎，4S 店太贵。",
      "好的，记得要求用原厂机油滤芯。",
      C("decision", "保养地点", "途虎", "定了，以后保养都去途虎", ("途虎",), tag="shop")),
    P("不去途虎了，改去小区门口那家修理厂，师傅人更靠谱。",
      "也好，熟悉的师傅更放心。",
      C("state", "保养地点", "小区门口的修理厂", "不去途虎了，改去小区门口那家修理厂", sup="shop")),
]))

# ------------------------------------------------------------------------------------------- claude-code
CONVS.append(Conv("claude-code-en.jsonl", "claude-code", "en", "2026-03-09T08:30:00Z", session="0c6c2b51-4d1e-4b8e-9d0a-7d3c2b1a0e01",
                  project="/home/dana/code/tidepool", turns=[
    P("We use MySQL 8 for the job queue tables right now. Add an index on jobs.status.",
      "Added migration 0042_jobs_status_idx.sql with `CREATE INDEX jobs_status_idx ON jobs(status)`.",
      C("fact", "job queue database", "MySQL 8", "We use MySQL 8 for the job queue tables", ("MySQL",), tag="db")),
    N("question", "why is test_worker_retry flaky? it fails like 1 in 5 runs",
      "It sleeps 0.1 s and races the worker thread. I'd replace the sleep with the fake clock."),
    P("Don't ever use `time.sleep` in tests, use the fake clock fixture.",
      "Understood. I replaced the sleep in test_worker_retry with `fake_clock.advance(0.1)`.",
      C("rule", "sleeping in tests", "never use time.sleep in tests; use the fake clock fixture", "Don't ever use `time.sleep` in tests", ("time.sleep", "fake clock"))),
    N("code", "here's the traceback:\n```\nTraceback (most recent call last):\n  File \"worker.py\", line 88, in run\n"
      "    must_retry = policy.decide(job)\n  File \"policy.py\", line 12, in decide\n    return job.attempts < cfg[\"max_attempts\"]\n"
      "KeyError: 'max_attempts'\n```",
      "The config has no `max_attempts`; the default lives in settings.py but policy.py reads the raw dict."),
    P("Let's use pydantic v2 for the config models, the v1 compat shim is slowing startup.",
      "I'll port `Settings` to pydantic v2 `BaseSettings` from pydantic-settings.",
      C("decision", "config models library", "pydantic v2", "Let's use pydantic v2 for the config models", ("pydantic",))),
    N("question", "Should we also move the CLI from argparse to typer?",
      "Typer would cut the parser code in half, but it's a new dependency."),
    P("hm, I'll think about it. oh and the staging redis is at redis://10.0.3.7:6379/2, put it in .env.example",
      "Added `REDIS_URL=redis://10.0.3.7:6379/2` to .env.example.",
      C("fact", "staging Redis URL", "redis://10.0.3.7:6379/2", "the staging redis is at redis://10.0.3.7:6379/2", ("Redis",))),
    N("assistant-proposal", "what naming do you suggest for the new queue?",
      "I'd go with `tidepool-jobs-v2` and we'll use a separate consumer group per worker pool."),
    P("I prefer small commits, one concern per commit. And always run ruff before committing.",
      "Got it: small focused commits, ruff before each.",
      C("preference", "commit size", "small commits, one concern per commit", "I prefer small commits, one concern per commit"),
      C("preference", "ruff before commit", "always run ruff before committing", "always run ruff before committing", ("ruff",))),
    P("We migrated the job queue from MySQL to Postgres 16 this morning; update the docs pls",
      "Updated docs/architecture.md and the README's setup section for Postgres 16.",
      C("state", "job queue database", "Postgres 16", "We migrated the job queue from MySQL to Postgres 16", ("Postgres",), sup="db")),
    N("hedge", "maybe we'll need partitioning on the jobs table eventually, not now though",
      "Agreed, at the current volume it isn't needed."),
    P("Remember: the prod deploy window is Tuesdays 14:00-16:00 UTC.",
      "Noted. I'll mention it in the deploy checklist.",
      C("fact", "prod deploy window", "Tuesdays 14:00-16:00 UTC", "the prod deploy window is Tuesdays 14:00-16:00 UTC")),
]))

CONVS.append(Conv("claude-code-zh.jsonl", "claude-code", "zh", "2026-01-21T01:00:00Z", session="5e9a7c3d-1f2b-4c6d-8e0f-a1b2c3d4e5f6",
                  project="/Users/lin/work/price-watch", turns=[
    P("这个项目用 Python 3.12，依赖管理用 uv，别用 poetry。",
      "好的，我用 `uv init` 建了 pyproject.toml，requires-python = \">=3.12\"。",
      C("fact", "Python 版本", "3.12", "这个项目用 Python 3.12", ("Python",)),
      C("decision", "依赖管理工具", "uv", "依赖管理用 uv，别用 poetry", ("uv",))),
    N("question", "爬京东的时候要不要用 Playwright？还是 requests 就够了？",
      "京东商品页的价格是 JS 渲染的，requests 拿不到，建议 Playwright。"),
    P("就用 Playwright 吧，京东的页面大部分是 JS 渲染的。",
      "好，我加了 playwright 依赖，并写了 fetch_price()。",
      C("decision", "爬虫工具", "Playwright", "就用 Playwright 吧", ("Playwright", "京东"))),
    N("code", "这段代码为什么报错？\n```python\nasync def fetch(page):\n    # 必须等待网络空闲\n"
      "    await page.goto(url, wait_until=\"networkidle\")\n    return await page.inner_text(\".price\")\n```",
      "`url` 没有定义，应该作为参数传进来。"),
    P("请求间隔必须大于 3 秒，禁止并发爬同一个站点。",
      "明白，我加了按域名的限速器，间隔 3 秒以上，同一域名串行。",
      C("rule", "请求间隔", "大于 3 秒", "请求间隔必须大于 3 秒"),
      C("rule", "同站点并发", "禁止并发爬同一个站点", "禁止并发爬同一个站点")),
    N("question", "如果被封 IP 了怎么办？要不要上代理池？",
      "先把频率降下来，真被封再考虑代理池。"),
    P("数据先存 SQLite，文件放在 data/prices.db。",
      "好的，我建了 prices 表。",
      C("decision", "数据存储", "SQLite", "数据先存 SQLite", ("SQLite",), tag="store")),
    N("chit-chat", "哈哈今天京东的价格又变了三次，这帮人真能折腾",
      "价格变动越频繁，这个工具越有用 😄"),
    P("通知我喜欢用企业微信机器人，邮件我基本不看。",
      "好的，我写一个企业微信 webhook 的通知函数。",
      C("preference", "通知方式", "企业微信机器人", "通知我喜欢用企业微信机器人", ("企业微信",))),
    N("hedge", "我觉得可能要换成 MongoDB，不过还没想清楚。",
      "想清楚再说，现在的数据量 SQLite 没问题。"),
    P("存储不用 SQLite 了，改用 DuckDB，分析查询快很多。",
      "好的，我把存储层换成 duckdb，并迁移了已有数据。",
      C("state", "数据存储", "DuckDB", "存储不用 SQLite 了，改用 DuckDB", ("DuckDB",), sup="store")),
    N("quoted", "你刚才说「以后都用 async 写」，这个我再想想。",
      "好的，目前同步和异步两种写法都保留。"),
    P("记住：定时任务每天早上 8 点跑一次。",
      "好的，crontab 设成 `0 8 * * *`。",
      C("fact", "定时任务时间", "每天早上 8 点", "定时任务每天早上 8 点跑一次")),
]))

# ------------------------------------------------------------------------------------------- codex
CONVS.append(Conv("codex-en.jsonl", "codex", "en", "2026-02-24T14:00:00Z", session="019c7d2e-5a41-7c02-9f3e-6b1d0c8a4e27",
                  project="/home/dana/code/billing-api", turns=[
    P("The billing API versions go in the URL path (/v2/...), not in headers. Decided with the team yesterday.",
      "OK. I'll route /v2 in the router and keep /v1 as is.",
      C("decision", "API versioning", "version in the URL path", "The billing API versions go in the URL path", ("billing API",))),
    N("question", "what's the difference between 402 and 403 for a failed payment?",
      "402 Payment Required is rarely used by clients; most APIs return 402 for card declines and 403 for permission errors."),
    P("All money amounts must be integers in cents. No floats anywhere in the billing code.",
      "Understood, I'll add a check in the models.",
      C("rule", "money amounts", "integers in cents, never floats", "All money amounts must be integers in cents")),
    N("hedge", "Can you add a migration that adds `currency` to invoices? Default should be EUR I guess.",
      "Added 0007_invoice_currency.py with a default of 'EUR'."),
    P("Our Stripe account stays in test mode until March 1. The webhook endpoint is /hooks/stripe.",
      "Noted. I'll read the mode from STRIPE_MODE.",
      C("fact", "Stripe mode", "test mode until March 1", "Our Stripe account stays in test mode until March 1", ("Stripe",)),
      C("fact", "Stripe webhook endpoint", "/hooks/stripe", "The webhook endpoint is /hooks/stripe", ("Stripe",))),
    N("hypothetical", "What if we dropped Stripe and used Adyen instead? Just curious about the effort.",
      "A few weeks: the payment intents map well, but webhooks and refunds differ."),
    N("negated", "to be clear, I never said we are moving to Adyen. and we haven't decided on a tax library either.",
      "Clear: Stripe stays, tax library still open."),
    N("code", "review this diff pls\n```diff\n-    amount: float  # we'll go with floats for now\n+    amount_cents: int\n```",
      "Looks right; also update the serializer."),
    P("I prefer pytest parametrize over copy-pasted test cases, keep that in mind.",
      "Will do.",
      C("preference", "test style", "pytest parametrize instead of copy-pasted test cases", "I prefer pytest parametrize over copy-pasted test cases", ("pytest",))),
    P("fyi the invoice PDF generator is WeasyPrint v60",
      "Thanks, I'll pin weasyprint==60.* then.",
      C("fact", "invoice PDF generator", "WeasyPrint v60", "the invoice PDF generator is WeasyPrint v60", ("WeasyPrint",), tag="pdf")),
    P("we replaced WeasyPrint with Typst for the invoice PDFs, its way faster.",
      "Nice, I removed weasyprint from the requirements.",
      C("state", "invoice PDF generator", "Typst", "we replaced WeasyPrint with Typst for the invoice PDFs", ("Typst",), sup="pdf")),
    N("assistant-proposal", "sounds good",
      "I'll also switch the email queue to SQS and we'll use a dead-letter queue for failed sends."),
    P("Never retry a charge automatically more than once. That's a hard rule from finance.",
      "Understood, max one automatic retry per charge.",
      C("rule", "charge retries", "at most one automatic retry per charge", "Never retry a charge automatically more than once")),
]))

CONVS.append(Conv("codex-zh.jsonl", "codex", "zh", "2026-02-10T02:00:00Z", session="019b7a10-c3d2-7e45-8a19-2f6e0b9d1c84",
                  project="/Users/wei/src/weekly-report", turns=[
    P("周报工具只导出 Markdown，不做 PDF，这个定了。",
      "好的，只实现 Markdown 导出。",
      C("decision", "导出格式", "只导出 Markdown", "周报工具只导出 Markdown，不做 PDF，这个定了", ("Markdown",))),
    N("question", "导出命令叫什么好？",
      "建议 `weekly export --md`，以后加别的格式也好扩展。"),
    P("可以，就叫 weekly export --md。",
      "好，命令已经加上。",
      C("decision", "导出命令", "weekly export --md", "就叫 weekly export --md", ("weekly export",))),
    P("我更喜欢文件名用中文日期，比如 2026年2月12日.md。",
      "好的，文件名改成中文日期格式。",
      C("preference", "文件名格式", "中文日期", "我更喜欢文件名用中文日期")),
    N("question", "要不要支持从飞书文档导入？",
      "飞书有开放 API，可以做，但需要企业应用授权。"),
    N("code", "这是现在的配置文件：\n```toml\n[export]\nformat = \"md\"  # 以后都用 md\nout_dir = \"reports\"\n```\n帮我看看有没有问题",
      "没问题，不过 out_dir 建议写成绝对路径。"),
    P("报告默认存放目录是 ~/Documents/周报。",
      "好的，默认 out_dir 设为 ~/Documents/周报。",
      C("fact", "默认存放目录", "~/Documents/周报", "报告默认存放目录是 ~/Documents/周报", tag="dir")),
    N("hypothetical", "如果同事用 Windows 呢？中文文件名会不会乱码？",
      "新版 Windows 默认 UTF-8 文件名没问题，老的压缩工具可能会乱码。"),
    P("以后回复我都用中文，代码注释用英文。",
      "好的。",
      C("preference", "回复语言", "中文", "以后回复我都用中文"),
      C("preference", "代码注释语言", "英文", "代码注释用英文")),
    N("hedge", "嗯，可能下个版本再加个图表吧。",
      "好的，可以用 matplotlib 生成 PNG 再嵌到 Markdown 里。"),
    P("默认目录不用 ~/Documents/周报 了，改成 ~/周报，路径短一点。",
      "好的，默认目录已改为 ~/周报。",
      C("state", "默认存放目录", "~/周报", "默认目录不用 ~/Documents/周报 了，改成 ~/周报", sup="dir")),
    P("周报每周五下午 5 点前必须生成好，老板周五晚上要看。",
      "好的，我加一个周五 16:30 的定时任务。",
      C("rule", "周报生成时间", "每周五下午 5 点前生成好", "周报每周五下午 5 点前必须生成好")),
    N("chit-chat", "谢谢，今天效率挺高的，明天继续定剩下的几个功能。",
      "不客气，明天见！"),
]))

# ------------------------------------------------------------------------------------------- sillytavern
CONVS.append(Conv("sillytavern-en.jsonl", "sillytavern", "en", "2026-02-14T20:00:00Z", persona=("Dana", "Archivist"), turns=[
    N("role-play", "", "*The Archivist looks up from a ledger.* Welcome back. What shall we record tonight?"),
    P("I want to plan my novel. The heroine is a cartographer, not a soldier - that's decided.",
      "A cartographer, then. She maps the drowned coast for the guild.",
      C("decision", "heroine's profession", "cartographer", "The heroine is a cartographer, not a soldier - that's decided")),
    N("role-play", "*leans over the desk* Tell me, old man, have you ever seen the drowned coast? They say nobody must ever map it.",
      "*The Archivist chuckles.* Many have tried. The guild burns their maps."),
    P("Her name will be Ilse. I prefer short, Germanic names for the northern characters.",
      "Ilse. A fine name. *writes it in the ledger*",
      C("decision", "heroine's name", "Ilse", "Her name will be Ilse", ("Ilse",)),
      C("preference", "northern character names", "short Germanic names", "I prefer short, Germanic names for the northern characters")),
    N("hypothetical", "What if Ilse had a twin brother? Would that make the plot too crowded?",
      "A twin could mirror her choices... but it does split the reader's attention."),
    N("role-play", "*whispers* We'll go with the plan then. We burn the maps at midnight.",
      "*The Archivist nods slowly and snuffs the candle.*"),
    P("OOC: the story is set in the 1870s in a fictional Baltic port town called Ostmark. Remember that.",
      "(OOC: noted, Ostmark in the 1870s.)",
      C("fact", "story setting", "Ostmark", "the story is set in the 1870s in a fictional Baltic port town called Ostmark", ("Ostmark",), tag="setting")),
    N("hedge", "Maybe the villain is her mentor? I'm not sure yet.",
      "That would give the betrayal real weight."),
    P("OOC: rule for you - never write Ilse's inner thoughts in first person, always third person limited.",
      "(OOC: understood, third person limited.)",
      C("rule", "point of view", "third person limited, never first person", "never write Ilse's inner thoughts in first person, always third person limited", ("Ilse",))),
    N("role-play", "*I slam the ledger shut.* Never again, Archivist. I'm done with the guild.",
      "*The Archivist raises an eyebrow.* You said that last winter."),
    P("OOC: change of plan, the setting moves from Ostmark to Riga, a real city, it makes the research easier.",
      "(OOC: Riga it is.)",
      C("state", "story setting", "Riga", "the setting moves from Ostmark to Riga", ("Riga",), sup="setting")),
    N("chit-chat", "haha this is fun, let's continue tomorrow",
      "*The Archivist bows.* Until tomorrow."),
]))

CONVS.append(Conv("sillytavern-zh.jsonl", "sillytavern", "zh", "2026-01-25T13:40:00Z", persona=("小林", "书店老板"), turns=[
    N("role-play", "", "*推了推眼镜* 又来啦？今天想找什么书？"),
    N("question", "我想开始学日语，先从哪本教材开始？",
      "《标准日本语》初级上册，配套音频一定要听。"),
    P("好，那就定了：三月底前学完初级上册。",
      "有志气！*在本子上记了一笔*",
      C("decision", "日语学习计划", "三月底前学完初级上册", "那就定了：三月底前学完初级上册", ("标准日本语",), tag="plan")),
    N("role-play", "*拿起一本书翻了翻* 老板，这本书必须今天买吗？",
      "*笑* 不买也行，不过明天就涨价了。"),
    P("（OOC：以后回复里的动作描写少一点，我喜欢对话多一些。）",
      "（OOC：好的，多写对话。）",
      C("preference", "回复风格", "对话多、动作描写少", "以后回复里的动作描写少一点，我喜欢对话多一些")),
    N("role-play", "*笑着摇头* 要是我三个月都坚持不下来呢？",
      "那就再来买下册的时候给你打九折。"),
    P("（OOC：记住，我每天只有晚上 9 点以后有空。）",
      "（OOC：记住了。）",
      C("fact", "空闲时间", "每天晚上 9 点以后", "我每天只有晚上 9 点以后有空")),
    N("role-play", "*把书放回架子上* 决定了，我就要这本！",
      "*接过书* 好眼光，给你包起来。"),
    N("hedge", "（OOC：可能下周开始改成每天学两课，再看吧。）",
      "（OOC：好的，随时告诉我。）"),
    P("（OOC：禁止在回复里用日语罗马音，全部用假名。）",
      "（OOC：明白，只用假名。）",
      C("rule", "日语注音", "只用假名，禁止罗马音", "禁止在回复里用日语罗马音，全部用假名")),
    N("chit-chat", "老板你这店开了多少年了？",
      "*掰着手指* 二十三年啦。"),
    P("（OOC：计划改了，不用三月底了，改成四月底前学完初级上册。）",
      "（OOC：好，四月底。）",
      C("state", "日语学习计划", "四月底前学完初级上册", "不用三月底了，改成四月底前学完初级上册", sup="plan")),
    N("role-play", "*挥挥手* 明天见啦老板！",
      "*点点头* 路上小心。"),
]))

# ------------------------------------------------------------------------------------------- text
CONVS.append(Conv("text-en.txt", "text", "en", "2026-03-05T10:00:00Z", turns=[
    N("question", "We need a name for the background sync service, any ideas?",
      "Some plain options: `syncd`, `tidepool-sync`, `relay`."),
    P("tidepool-sync it is. Also I prefer structured JSON logs over plain text.",
      "Good choice. I'll log JSON lines with `ts`, `level`, `msg`.",
      C("decision", "sync service name", "tidepool-sync", "tidepool-sync it is", ("tidepool-sync",)),
      C("preference", "log format", "structured JSON logs", "I prefer structured JSON logs over plain text")),
    N("assistant-proposal", "ok",
      "I'll set that up tomorrow morning, and we'll use logrotate for the log files."),
    P("The sync interval is 5 minutes, its set via SYNC_INTERVAL_SEC=300.",
      "Right, 300 seconds.",
      C("fact", "sync interval", "5 minutes", "The sync interval is 5 minutes", ("SYNC_INTERVAL_SEC",), tag="interval")),
    N("hypothetical", "Would it be crazy to use websockets instead of polling?",
      "Not crazy, but you'd need sticky sessions behind the load balancer."),
    P("the S3 bucket for snapshots is tidepool-snapshots-eu, region eu-central-1",
      "Noted.",
      C("fact", "snapshot bucket", "tidepool-snapshots-eu", "the S3 bucket for snapshots is tidepool-snapshots-eu", ("S3",)),
      C("fact", "snapshot bucket region", "eu-central-1", "region eu-central-1")),
    N("quoted", "I said \"we must support offline mode\" in the meeting but honestly I'm not sure anymore.",
      "Offline mode doubles the sync complexity; worth deciding after the beta."),
    P("Never push directly to main. PRs only, even for typos.",
      "Understood, I'll always open a PR.",
      C("rule", "pushing to main", "never push directly to main; PRs only", "Never push directly to main")),
    N("negated", "I never said we'd use SQS, where did that come from?",
      "My mistake, I assumed it from the AWS setup. No SQS."),
    P("Update: sync interval changed from 5 minutes to 1 minute, customers complained.",
      "OK, SYNC_INTERVAL_SEC=60.",
      C("state", "sync interval", "1 minute", "sync interval changed from 5 minutes to 1 minute", sup="interval")),
    N("chit-chat", "lunch break, brb. always hungry at this hour lol",
      "Enjoy your lunch!"),
    P("Let's use Sentry for error tracking, the free tier is enough for now.",
      "I'll add sentry-sdk and the DSN env var.",
      C("decision", "error tracking", "Sentry", "Let's use Sentry for error tracking", ("Sentry",))),
]))

CONVS.append(Conv("text-zh.txt", "text", "zh", "2026-01-08T01:30:00Z", persona=("用户", "助手"), turns=[
    P("家里的 NAS 要不要换成群晖？现在是自己装的 TrueNAS。",
      "如果你不想再折腾，群晖省心；但 TrueNAS 的 ZFS 快照更可靠。",
      C("fact", "NAS 系统", "TrueNAS", "现在是自己装的 TrueNAS", ("NAS", "TrueNAS"))),
    N("assistant-proposal", "继续",
      "建议保留 TrueNAS，把快照策略改成每小时一次、保留 48 小时。"),
    P("好，不换群晖了。我更喜欢用命令行管理，不要图形界面。",
      "明白，后续都给你命令行的做法。",
      C("decision", "是否换群晖", "不换群晖，保留 TrueNAS", "不换群晖了", ("群晖",)),
      C("preference", "NAS 管理方式", "命令行，不要图形界面", "我更喜欢用命令行管理，不要图形界面")),
    P("快照策略就按你说的改成每小时一次，保留 48 小时。",
      "好的，命令是 `zfs set` 加上定时任务。",
      C("decision", "快照策略", "每小时一次，保留 48 小时", "快照策略就按你说的改成每小时一次，保留 48 小时")),
    N("hypothetical", "如果硬盘坏了一块，RAIDZ1 能撑多久？",
      "能继续用，但重建期间再坏一块就丢数据，尽快换盘。"),
    P("路由器的管理地址是 192.168.50.1，宽带是电信 500M。",
      "记下了。",
      C("fact", "路由器管理地址", "192.168.50.1", "路由器的管理地址是 192.168.50.1", ("路由器",)),
      C("fact", "宽带", "电信 500M", "宽带是电信 500M", ("电信",), tag="isp")),
    N("hedge", "可能要加一块 SSD 做缓存，看价格吧。",
      "家用场景 L2ARC 提升不大，先看内存够不够。"),
    P("以后都不要再推荐我买群晖了，我不喜欢它的生态。",
      "好的，不再推荐群晖。",
      C("preference", "群晖推荐", "不要再推荐群晖", "以后都不要再推荐我买群晖了", ("群晖",))),
    P("禁止把 NAS 的 SMB 端口映射到公网，这个是底线。",
      "同意，远程访问用 VPN。",
      C("rule", "SMB 端口", "禁止映射到公网", "禁止把 NAS 的 SMB 端口映射到公网", ("SMB",))),
    N("quoted", "我朋友说「Docker 必须装在 SSD 上」，是真的吗？",
      "不是必须，但放 SSD 上容器启动更快。"),
    P("宽带从电信换成联通了，1000M，价格一样。",
      "不错，记得把 DDNS 更新一下。",
      C("state", "宽带", "联通 1000M", "宽带从电信换成联通了，1000M", ("联通",), sup="isp")),
    N("chit-chat", "今天折腾了一天网络，好累，先这样吧。",
      "辛苦了，早点休息。"),
    P("note：Jellyfin 的端口是 8096，别改。",
      "好的，保持 8096。",
      C("fact", "Jellyfin 端口", "8096", "Jellyfin 的端口是 8096", ("Jellyfin",))),
]))


# ============================================================================================ renderers


def _times(conv: Conv):
    t0 = datetime.fromisoformat(conv.start.replace("Z", "+00:00"))
    for i in range(len(conv.turns)):
        yield t0 + timedelta(minutes=3 * i)


def _iso(t: datetime, ms: bool = False) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.000Z" if ms else "%Y-%m-%dT%H:%M:%SZ")


def _uid(*parts) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "memvault-eval:" + ":".join(map(str, parts))))


def _dump(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def render_jsonl(conv: Conv) -> str:
    lines, n = [], 0
    for t, when in zip(conv.turns, _times(conv)):
        for role, text, dt in (("user", t.user, 0), ("assistant", t.asst, 20)):
            if not text:
                continue
            n += 1
            lines.append(_dump({"id": f"m-{n:03d}", "role": role, "session": conv.session, "project": conv.project,
                                "ts": _iso(when + timedelta(seconds=dt)), "content": text}))
    return "\n".join(lines) + "\n"


def render_openai(conv: Conv) -> str:
    msgs = [{"role": "system", "content": "You are a helpful assistant." if conv.lang == "en" else "用中文回答。"}]
    for t in conv.turns:
        if t.user:
            msgs.append({"role": "user", "content": t.user})
        msgs.append({"role": "assistant", "content": t.asst})
    doc = {"model": "gpt-4o-mini", "session": conv.session, "project": conv.project, "messages": msgs}
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def render_chatgpt(convs: list[Conv]) -> str:
    out = []
    for conv in convs:
        root = _uid(conv.session, "root")
        mapping = {root: {"id": root, "message": None, "parent": None, "children": []}}
        parent = root
        for i, (t, when) in enumerate(zip(conv.turns, _times(conv))):
            for role, text, dt in (("user", t.user, 0), ("assistant", t.asst, 15)):
                if not text:
                    continue
                nid = _uid(conv.session, i, role)
                mapping[parent]["children"].append(nid)
                mapping[nid] = {"id": nid, "message": {
                    "id": nid, "author": {"role": role, "name": None, "metadata": {}},
                    "create_time": (when + timedelta(seconds=dt)).timestamp(), "update_time": None,
                    "content": {"content_type": "text", "parts": [text]}, "status": "finished_successfully",
                    "end_turn": role == "assistant", "weight": 1.0, "metadata": {}, "recipient": "all", "channel": None},
                    "parent": parent, "children": []}
                parent = nid
        first = next(_times(conv)).timestamp()
        out.append({"title": conv.title, "create_time": first, "update_time": first + 3600, "mapping": mapping,
                    "current_node": parent, "id": conv.session, "conversation_id": conv.session})
    return json.dumps(out, ensure_ascii=False) + "\n"


def render_claude_code(conv: Conv) -> str:
    lines = []
    base = {"isSidechain": False, "userType": "external", "cwd": conv.project, "sessionId": conv.session,
            "version": "2.0.31", "gitBranch": "main"}
    parent = None
    t0 = next(_times(conv))
    caveat = _uid(conv.session, "caveat")
    lines.append(_dump({"parentUuid": None, **base, "isMeta": True, "type": "user", "message": {"role": "user", "content":
        "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these "
        "messages or otherwise consider them in your response unless the user explicitly asks you to."},
        "uuid": caveat, "timestamp": _iso(t0 - timedelta(seconds=5), ms=True)}))
    parent = caveat
    for i, (t, when) in enumerate(zip(conv.turns, _times(conv))):
        uid = _uid(conv.session, i, "user")
        lines.append(_dump({"parentUuid": parent, **base, "type": "user", "message": {"role": "user", "content": t.user},
                            "uuid": uid, "timestamp": _iso(when, ms=True)}))
        aid = _uid(conv.session, i, "assistant")
        lines.append(_dump({"parentUuid": uid, **base, "type": "assistant", "message": {
            "id": "msg_" + aid.replace("-", "")[:24], "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": t.asst}], "stop_reason": "end_turn"},
            "uuid": aid, "timestamp": _iso(when + timedelta(seconds=30), ms=True)}))
        parent = aid
    return "\n".join(lines) + "\n"


def render_codex(conv: Conv) -> str:
    t0 = next(_times(conv))
    lines = [_dump({"timestamp": _iso(t0 - timedelta(seconds=10), ms=True), "type": "session_meta", "payload": {
        "id": conv.session, "timestamp": _iso(t0 - timedelta(seconds=10), ms=True), "cwd": conv.project,
        "originator": "codex_cli_rs", "cli_version": "0.98.0", "source": "cli", "model_provider": "openai"}})]
    lines.append(_dump({"timestamp": _iso(t0 - timedelta(seconds=9), ms=True), "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text":
            f"<environment_context>\n  <cwd>{conv.project}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
            "  <sandbox_mode>workspace-write</sandbox_mode>\n</environment_context>"}]}}))
    for t, when in zip(conv.turns, _times(conv)):
        lines.append(_dump({"timestamp": _iso(when, ms=True), "type": "response_item", "payload": {
            "type": "message", "role": "user", "content": [{"type": "input_text", "text": t.user}]}}))
        lines.append(_dump({"timestamp": _iso(when, ms=True), "type": "event_msg", "payload": {
            "type": "user_message", "message": t.user}}))
        lines.append(_dump({"timestamp": _iso(when + timedelta(seconds=25), ms=True), "type": "response_item", "payload": {
            "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": t.asst}]}}))
    return "\n".join(lines) + "\n"


def render_sillytavern(conv: Conv) -> str:
    user, char = conv.persona
    t0 = next(_times(conv))
    lines = [_dump({"user_name": user, "character_name": char, "create_date": t0.strftime("%Y-%m-%d@%Hh%Mm%Ss"),
                    "chat_metadata": {"integrity": _uid(conv.file, "integrity"), "note_prompt": "", "tainted": False}})]
    for t, when in zip(conv.turns, _times(conv)):
        stamp = when.strftime("%B %-d, %Y %-I:%M%p").replace("AM", "am").replace("PM", "pm")
        if t.user:
            lines.append(_dump({"name": user, "is_user": True, "is_system": False, "send_date": stamp, "mes": t.user,
                                "extra": {}}))
        lines.append(_dump({"name": char, "is_user": False, "is_system": False, "send_date": stamp, "mes": t.asst,
                            "extra": {"api": "openai", "model": "gpt-4o"}}))
    return "\n".join(lines) + "\n"


def render_text(conv: Conv) -> str:
    user, asst = conv.persona
    colon = "：" if conv.lang == "zh" else ":"
    out = []
    if conv.lang == "en":
        out.append("# Pairing notes\n")
    for t, when in zip(conv.turns, _times(conv)):
        stamp = when.strftime("[%Y-%m-%d %H:%M] ")
        out.append(f"{stamp}{user}{colon}{t.user}")
        out.append(f"{stamp}{asst}{colon}{t.asst}")
        out.append("")
    return "\n".join(out)


# ============================================================================================ labels


def episode_key(conv: Conv, turn: int, multi: bool) -> str:
    return f"{conv.file}#{conv.session}#{turn}" if multi else f"{conv.file}#{turn}"


def build() -> tuple[dict[str, str], list[dict]]:
    files: dict[str, list[Conv]] = {}
    for conv in CONVS:
        files.setdefault(conv.file, []).append(conv)
    rendered: dict[str, str] = {}
    labels: list[dict] = []
    for name, convs in files.items():
        fmt = convs[0].fmt
        if fmt == "chatgpt":
            rendered[name] = render_chatgpt(convs)
        else:
            assert len(convs) == 1, name
            rendered[name] = {"jsonl": render_jsonl, "openai": render_openai, "claude-code": render_claude_code,
                              "codex": render_codex, "sillytavern": render_sillytavern, "text": render_text}[fmt](convs[0])
        multi = len(convs) > 1
        for conv in convs:
            tags: dict[str, str] = {}
            for i, t in enumerate(conv.turns, start=1):
                key = episode_key(conv, i, multi)
                assert bool(t.cards) != bool(t.nothing), key
                cards = []
                for k, c in enumerate(t.cards, start=1):
                    cid = f"{key}/{k}"
                    assert c.evidence in t.user, (cid, "evidence not in the user's text")
                    if c.tag:
                        tags[c.tag] = cid
                    card = {"id": cid, "kind": c.kind, "subject": c.subject, "value": c.value,
                            "title": c.title or f"{c.subject}: {c.value}", "entities": list(c.entities),
                            "supersedes": tags[c.sup] if c.sup else None, "evidence": c.evidence}
                    cards.append(card)
                labels.append({"episode": key, "file": name, "format": fmt, "lang": conv.lang,
                               "session": conv.session if multi else None, "turn": i, "cards": cards,
                               "nothing": t.nothing})
    return rendered, labels


def main() -> None:
    rendered, labels = build()
    inputs = HERE / "inputs"
    inputs.mkdir(exist_ok=True)
    for name, text in rendered.items():
        (inputs / name).write_text(text, encoding="utf-8")
    with open(HERE / "labels.jsonl", "w", encoding="utf-8") as fh:
        for row in labels:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

"""Cue tables of the offline distill engine (issue 10): what people say outright, in English and Chinese.

Data only. Each table is a regular expression source; extract.py compiles them once per process. Patterns
match lower-cased English and raw Chinese. A cue alone never makes a card: extract.py first drops what is
asked, hedged, hypothetical, negated, quoted, narrated or pasted as code.
"""

from __future__ import annotations

# ------------------------------------------------------------------ what disqualifies a sentence

# Questions: a question mark, or an English sentence that opens like one. Chinese questions are caught by
# their mark or by the particles below.
QUESTION_EN = r"^(?:should|shall|what|how|why|is|are|do|does|did|can|could|would|which|when|where|who|whom|any)\b(?!'t)"
QUESTION_ZH = r"要不要|是不是|能不能|可不可以|会不会|怎么办|为什么|吗$|呢$"

# Hypotheticals: "what if", "如果…呢".
HYPOTHETICAL_EN = r"\b(?:if|hypothetically|suppose|supposing|imagine|in case|unless|would)\b"
HYPOTHETICAL_ZH = r"如果|要是|假如|假设|万一|的话呢"

# Hedges: not stated outright.
HEDGE_EN = (r"\b(?:maybe|perhaps|probably|possibly|might|not sure|unsure|i guess|i think we|i suppose|"
            r"at some point|eventually|thinking out loud|i'll think|i will think|not yet decided|tbd|"
            r"for now\?|kind of|sort of)\b")
HEDGE_ZH = r"可能|也许|或许|大概|还没想好|没想好|还没想清楚|不确定|再想想|看情况|再说吧|好像|说不定|考虑一下"

# A choice denied or left open: "I didn't say we'd go with X", "我没决定用 Redis", "还没定".
NEGATED_EN = (r"\b(?:didn't say|did not say|never said|haven't decided|have not decided|not decided|"
              r"didn't decide|did not decide|undecided|not going with|won't go with)\b")
NEGATED_ZH = r"没决定|还没定|没说要|没定|不是说要|并没有"

# Chit-chat markers: laughter and asides are not statements to keep.
CHITCHAT = r"\b(?:lol|lmao|haha+|hehe|brb)\b|哈哈|嘿嘿|累死了|😂|🤣"

# ------------------------------------------------------------------ what makes a card

# State changes with both the old and the new value. Named groups: subj (may be empty), old, new.
STATE_EN = (
    # "the deploy target is now Hetzner, not Fly.io", "we now use X instead of Y"
    r"(?:(?P<subj>[\w' -]{0,40}?)\s+)?(?:is|are)\s+now\s+(?P<new>[^,;]+?),?\s+(?:not|instead of|no longer)\s+"
    r"(?P<old>[^,;]+?)(?:\s+any\s?more)?$",
    r"(?:(?P<subj>[\w' -]{0,40}?)\s*)?\b(?:moved|switched|migrated|changed|went|changing|moving|switching|"
    r"migrating|moves|switches|migrates|changes)\s+(?P<subj2>[\w' -]{0,40}?)\s*\bfrom\s+(?P<old>.+?)\s+"
    r"(?:to|over to)\s+(?P<new>.+)$",
    r"(?:(?P<subj>[\w' -]{0,40}?)\s*)?\b(?:replaced|swapped|replace|swap)\s+(?P<old>.+?)\s+(?:with|for)\s+"
    r"(?P<new>.+)$",
)
STATE_ZH = (
    # 不用 X 了，改用 Y / 不去 X 了，改去 Y / 不用三月底了，改成四月底…
    r"(?P<subj>[^，,。；;：:]{0,16}?)不(?:用|去|再用|要)\s*(?P<old>[^，,。；;]+?)\s*了\s*[，,、]?\s*"
    r"(?P<subj2>[^，,。；;：:]{0,12}?)(?:全部|都)?"
    r"(?:改用|改成|改去|换成|换到|改为|换用|改到)\s*(?P<new>.+)$",
    # 从 X 换成 Y / 从 X 迁到 Y
    r"(?P<subj>[^，,。；;：:]{0,16}?)从\s*(?P<old>[^，,。；;]+?)\s*(?:换成|改成|迁到|迁移到|搬到|换到|改为|切到|切换到)"
    r"\s*(?P<new>.+)$",
    # X 由 A 改为 B
    r"(?P<subj>[^，,。；;：:]{0,16}?)由\s*(?P<old>[^，,。；;]+?)\s*(?:改为|改成|换成)\s*(?P<new>.+)$",
)

RULE_EN = (r"\b(?:must|mustn't|must not|don't ever|do not ever|never ever|is forbidden|are forbidden|"
           r"not allowed|is required|are required|rule for|rule:|hard rule)\b|"
           r"\b(?:at most|at least|no more than|not more than)\s+(?:[\w$€£¥-]+\s+){0,2}?[\d$€£¥]")
# "must" of a guess, not of a rule: "That must be fun", "you must have been so proud", "it must've hurt".
EPISTEMIC_EN = (r"\bmust(?:'ve| have)\s+(?:been|felt|had|loved|missed|hurt|taken)\b|\bmust (?:miss|love|know|hate|think)\b|"
                r"\bmust (?:be|feel|look|sound)\s+(?:so|really|very|such|a|an|quite|pretty|super|fun|nice|great|hard|"
                r"tough|amazing|awesome|exciting|cool|lovely|wonderful|beautiful|interesting|incredible|scary|"
                r"difficult|proud|happy|exhausting|rewarding|relaxing|special|magical|tiring|crazy|wild|thrilled|"
                r"excited|stressful|nerve-wracking|heartbreaking|hectic|busy|lonely|nice)\b")
# "never <verb>" as an imperative about the work (never push, never expose, never retry) is a rule; about
# answers to the person or their own habits it is a preference (see PREFERENCE_NEVER_EN).
RULE_NEVER_EN = (r"^(?:and\s+|but\s+|also\s+)?never\b(?!\s+mind)(?!\s+(?:\w+ed|saw|thought|knew|been|had|was|were|"
                 r"felt|did|got|went|could|would|gonna|expected)\b)")
# An evaluation is not a value: "… is too much work", "… is really slow".
EVALUATION_EN = r"^\s*(?:too|so|very|really|pretty|quite|kind of|a bit|not|way|super|getting|just)\b"
RULE_ZH = r"必须|禁止|不许|不准|不得|不能超过|不超过|至少|最多|一律|严禁|务必"

PREFERENCE_EN = (r"\b(?:i prefer|i'd prefer|i would prefer|i'd rather|i would rather|i like|i love|i hate|"
                 r"i dislike|i don't like|i do not like|my preference|i'm vegetarian|i am vegetarian|i'm vegan|"
                 r"i never|prefer)\b")
PREFERENCE_ALWAYS_EN = r"^(?:and\s+|also\s+|please\s+|pls\s+)?always\b"
# "never suggest / recommend / answer …": about what the person wants to get.
PREFERENCE_NEVER_EN = r"\bnever\s+(?:suggest|recommend|propose|offer|send|show|give|answer|reply|book)\b"
PREFERENCE_ZH = (r"我喜欢|我更喜欢|我比较喜欢|我不喜欢|我讨厌|偏好|我习惯|以后.{0,12}都|以后都|不要再|别再|"
                 r"以后回复|以后.{0,6}(?:用|写)")

DECISION_EN = (r"\b(?:we'll go with|we will go with|let's go with|lets go with|going with|we're going with|"
               r"let's use|lets use|we'll use|we will use|we decided|i decided|decided to|decided on|"
               r"that's decided|it's decided|is decided|it is$|we chose|i chose|we picked|settled on|"
               r"we're settling on|final answer|(?:we|i) go with|postponed to|pushed back to|rescheduled to|moved to)\b")
DECISION_ZH = r"^不(?:换|买|上|装|搬)\S{1,12}了$|推迟.{0,6}到|延期到|提前到|决定|定了|就用|就选|就叫|就按|那就|先用|先存|统一用|改用|改成|选定|确定用|就这么定"

# Facts: a subject with a value. Subject nouns that take a value; the value itself, or a verb of being.
FACT_NOUN_EN = (r"\b(?:ip|ips|ip address|address|port|url|uri|endpoint|host|hostname|domain|version|bucket|"
                r"region|path|directory|folder|dir|interval|window|timeout|account|email|username|user name|"
                r"id|key name|name|server|database|db|os|passport|birthday|deadline|budget|size|limit|"
                r"schedule|time|date|timezone|zone|cluster|namespace|branch|repo|repository|model|plan)\b")
FACT_VERB_EN = (r"\b(?:is|are|'s|was set to|is set to|runs|runs on|is running|listens on|lives at|"
                r"is at|is on|is under|expires on|expires|is hosted on|hosted on|we use|we're using|"
                r"we are using|uses|is using|is allergic to|am allergic to|i'm allergic to|is located in|"
                r"is set in|stays in|stay in|is generated by|goes in|go in)\b")
FACT_ZH_NOUN = (r"(?:端口|地址|域名|IP|ip|网址|版本|目录|路径|时间|型号|车|系统|宽带|账号|账户|邮箱|密钥名|"
                r"服务器|数据库|平台|工具|框架|语言|分支|仓库|生日|截止|预算|区域|机房|型号|名字|名称)")
FACT_ZH = (r"是|用的是|在用|过敏|现在在|跑一次|每天|每周|放在|存放在|部署在|装的")

# Explicit memory requests: the request words are removed and the rest is classified.
MEMORY_EN = r"^(?:please\s+)?(?:remember(?: that)?|note(?: that)?|fyi|for the record|keep in mind(?: that)?)\b\s*[:,-]?\s*"
MEMORY_TAIL_EN = r"[,;-]?\s*(?:remember that|note that(?: for [\w ]+)?|keep that in mind|please remember)\.?$"
MEMORY_ZH = r"^(?:请)?(?:记住|记一下|备注|注意)\s*[：:，,]?\s*"
MEMORY_TAIL_ZH = r"[，,]?\s*(?:这个)?(?:一定)?要?(?:记住|记一下|记好)了?[。！!]?$"

# A clause that only heads what follows ("Rule for the homelab:", "代码评审规则定一下：").
RULE_HEADER = r"^(?:(?:a |one |new |house |team |hard )?rules?\b.{0,40}|.{0,20}规则.{0,6})$"
# Headers that name the kind of what follows ("Decision: RQ + Redis", "One preference: no ORM").
KIND_HEADER = (r"^(?:(?:a|one|my|our|the|team|final|another)\s+)?(?P<kind>decision|preference|rule|fact)s?$|"
               r"^(?P<zh>决定|偏好|规则|结论)$")
# A clause that puts something off ("管理后台以后再说", "the rest we can tweak later"): no card, no reason.
DEFERRAL = r"以后再说|再说吧|下周再定|回头再说|later\.?$|another time"
# A clause that continues the previous statement ("…, so never suggest meat").
CONTINUES = r"^(?:so|and so|which means|所以|因此)\b"

# A sentence that only qualifies the statement before it: it makes no card of its own.
MARK_DECIDED = r"^(?:(?:that's|that is|it's|it is|this is|这个|那就)\s*)?(?:decided|final|定了|确定了)\b[^，,：:;；]{0,40}$"
MARK_RULE = r"^(?:that's|that is|it's|it is|this is)\s+(?:a\s+)?(?:hard\s+|strict\s+|firm\s+)?rule\b[^，,：:;；]{0,40}$"
# A clause that only contrasts the statement before it ("…, not a soldier", "…，不做 PDF").
CONTRAST = r"^(?:not|never)\s+(?:a|an|the|in|on|at|my|our)\b|^(?:不做|不是|不要|不在|而不是)"
# A fact given as "noun value" after another fact ("…, region eu-central-1", "…, port 8443").
NOUN_VALUE_EN = r"^(?:the\s+)?(?:region|port|zone|version|host|user|path|branch|bucket|ip|url|domain)\s+\S+$"

# Lead-ins stripped before a clause is judged ("ok cool. btw", "Update:", "对了").
LEAD_EN = (r"^(?:(?:ok|okay|yeah|yes|yep|sure|cool|great|alright|right|so|and|also|oh|btw|by the way|update|"
           r"quick context for later|context|fyi|anyway|hm+|well|thanks|one more thing)\b\s*[:,.!-]?\s*)+")
LEAD_ZH = r"^(?:(?:对了|好|好的|嗯|那|另外|还有|顺便说一下|补充一下|更新一下|更新|总之|其实)\s*[：:，,。]?\s*)+"

# Role-play: *narration* and OOC markers (only OOC text counts in a message that narrates).
NARRATION = r"\*[^*\n]{2,}\*"
OOC = r"(?:\(|（)?\s*OOC\s*[:：]\s*(?P<ooc>[^)）]*)"

# Words that are capitalised but name nothing.
NOT_NAMES = frozenset("""
    I I'm I'd I'll We We'll We're Let's Lets The A An And But Or So If Then Our My Your It It's This That These
    Those There Here Rule Update Note Remember Don't Never Always Please Also Ok OK Okay Yeah Yes No Thanks Hm
    Quick For Moved Switched Migrated Replaced Changed Her His Their They You What Why How Should Mixed Tuesdays
    Mondays Wednesdays Thursdays Fridays Saturdays Sundays Monday Tuesday Wednesday Thursday Friday Saturday
    Sunday January February March April May June July August September October November December UTC
    Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec
    Hey Hi Hello Wow Thanks Thank Congrats Aww Omg Yay Sure Cool Great Nice Awesome Oh Ah Haha Lol Btw Last Next
""".split())

# Things named often enough that a sentence may open with them ("Postgres is our store", "Redis only for
# alerts"): a capitalised word at the start of a sentence is a name only when it is one of these, is written
# like a name (LGBTQ, GitHub, TrueNAS), or appears capitalised elsewhere in the text too.
KNOWN_NAMES = frozenset("""
    postgres postgresql mysql mariadb sqlite redis mongodb mongo elasticsearch opensearch kafka rabbitmq celery rq
    docker kubernetes k8s helm terraform ansible nginx caddy traefik apache jenkins github gitlab bitbucket git
    python java javascript typescript rust golang go ruby php kotlin swift scala elixir haskell lua perl
    django flask fastapi rails laravel spring react vue angular svelte nextjs nuxt expo flutter electron tauri
    node deno bun npm pnpm yarn pip poetry uv conda pytest jest vitest playwright cypress selenium
    aws azure gcp hetzner cloudflare vercel netlify heroku fly digitalocean linode ovh
    linux ubuntu debian fedora arch windows macos ios android truenas unraid proxmox synology jellyfin plex
    wireguard tailscale openvpn grafana prometheus sentry datadog loki
    openai anthropic claude chatgpt gpt ollama llama qwen mistral gemini deepseek copilot cursor
    slack discord telegram whatsapp notion obsidian figma jira trello zoom
    stripe paypal shopify wordpress excel word powerpoint
    pandas numpy pytorch tensorflow jupyter vscode vim emacs neovim
""".split())

# What a known thing is, as tags on the cards that name it: "之前用的是什么数据库" finds the card that says
# "we go with Postgres 16", "which cloud" the one about Hetzner. English and Chinese, searched like any tag.
KNOWN_KINDS = {
    ("database", "数据库"): "postgres postgresql mysql mariadb sqlite mongodb mongo redis elasticsearch opensearch "
                          "cassandra dynamodb supabase firebase clickhouse duckdb neo4j",
    ("queue", "队列"): "kafka rabbitmq celery rq sqs nats",
    ("cache", "缓存"): "redis memcached",
    ("cloud", "云服务"): "aws azure gcp hetzner cloudflare vercel netlify heroku fly digitalocean linode ovh",
    ("container", "容器"): "docker kubernetes k8s helm podman",
    ("language", "编程语言"): "python java javascript typescript rust golang go ruby php kotlin swift scala elixir "
                          "haskell lua perl",
    ("framework", "框架"): "django flask fastapi rails laravel spring react vue angular svelte nextjs nuxt expo "
                         "flutter electron tauri",
    ("editor", "编辑器"): "vscode vim emacs neovim cursor",
    ("os", "操作系统"): "linux ubuntu debian fedora arch windows macos ios android truenas unraid proxmox",
    ("vpn", "网络"): "wireguard tailscale openvpn",
    ("monitoring", "监控"): "grafana prometheus sentry datadog loki",
    ("model", "模型"): "openai claude chatgpt gpt ollama llama qwen mistral gemini deepseek",
    ("proxy", "反向代理"): "nginx caddy traefik",
    ("testing", "测试"): "pytest jest vitest playwright cypress selenium",
}
